// The Playground's Web Worker: runs the engine (slowstart_web.wasm, crates/slowstart-web/src/lib.rs
// gives its ABI) off the page's main thread. Told {id, scenario} (a scenario's TOML with its
// `--set` items and `--cc`, as JSON: settings.js `request`) or {id, config} (a canonical JSON
// config: a reproduction's live figure), it posts {id, progress} now and then, then {id, ok:
// true, summary, header, columns, ms} or {id, ok: false, error} (the loader's or the core's one
// line, as the CLI prints it). The page stops a run by terminating the worker.
"use strict";

const ABI_VERSION = 2;
let engine = null;
let current = null;
let lastTold = 0;

function progress(now, end) {
  const t = performance.now();
  if (t - lastTold > 100) {
    lastTold = t;
    postMessage({ id: current, progress: end > 0 ? now / end : 0 });
  }
  return 1;
}

async function load() {
  const response = await fetch("slowstart_web.wasm");
  if (!response.ok) throw new Error(`slowstart_web.wasm: ${response.status} ${response.statusText}`);
  const { instance } = await WebAssembly.instantiate(await response.arrayBuffer(), {
    env: { ss_progress: progress },
  });
  const e = instance.exports;
  if (e.ss_abi_version() !== ABI_VERSION) {
    throw new Error(`slowstart_web.wasm: ABI ${e.ss_abi_version()}, the page speaks ${ABI_VERSION}`);
  }
  return e;
}

// A column as numbers: a u64 from its two u32 halves (exact below 2^53; u64::MAX, "no value"
// in an unset column, becomes NaN).
function column(bytes, dtype, unset) {
  if (dtype === "|u1") return Uint8Array.from(bytes);
  const words = new Uint32Array(bytes.slice().buffer);
  if (dtype === "<u4") return Float64Array.from(words);
  const out = new Float64Array(words.length / 2);
  for (let i = 0; i < out.length; i++) {
    const [lo, hi] = [words[2 * i], words[2 * i + 1]];
    out[i] = unset && lo === 0xffffffff && hi === 0xffffffff ? NaN : hi * 4294967296 + lo;
  }
  return out;
}

function output(e) {
  return new Uint8Array(e.memory.buffer, e.ss_out_ptr(), e.ss_out_len());
}

// `entry`: ss_run_scenario or ss_run (crates/slowstart-web/src/lib.rs).
function run(e, entry, text) {
  const input = new TextEncoder().encode(text);
  const ptr = e.ss_alloc(input.length);
  new Uint8Array(e.memory.buffer, ptr, input.length).set(input);
  const start = performance.now();
  let status;
  try {
    status = e[entry](ptr, input.length);
  } catch (trap) {
    // A panic leaves its message in the output; memory exhausted leaves none.
    const said = new TextDecoder().decode(output(e));
    engine = null; // a trapped instance is not trusted again
    return {
      ok: false,
      error:
        said ||
        "the run needs more memory than the browser gives this page: shorten duration or " +
          `widen the trace intervals (trace.flow_interval, trace.queue_interval) [${trap.message}]`,
    };
  } finally {
    if (engine) e.ss_free(ptr, input.length);
  }
  const ms = performance.now() - start; // the engine's run alone
  const out = output(e);
  if (status !== 0) return { ok: false, error: new TextDecoder().decode(out) };
  // The envelope (crates/slowstart-web `envelope`): summary, header, each after its u32 length.
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const n = view.getUint32(0, true);
  const summaryText = new TextDecoder().decode(out.subarray(4, 4 + n));
  const m = view.getUint32(4 + n, true);
  const header = JSON.parse(new TextDecoder().decode(out.subarray(8 + n, 8 + n + m)));
  const body = out.subarray(8 + n + m);
  const columns = {};
  for (const [table, list] of Object.entries(header.tables)) {
    columns[table] = {};
    for (const c of list) {
      columns[table][c.name] = column(body.subarray(c.offset, c.offset + c.bytes), c.dtype, c.unset);
    }
  }
  return { ok: true, summary: summaryText, header, columns, ms };
}

onmessage = async (message) => {
  const { id, scenario, config } = message.data;
  current = id;
  try {
    engine = engine || (await load());
    const [entry, text] = scenario !== undefined ? ["ss_run_scenario", scenario] : ["ss_run", config];
    postMessage({ id, ...run(engine, entry, text) });
  } catch (err) {
    postMessage({ id, ok: false, error: String(err.message || err) });
  }
};
