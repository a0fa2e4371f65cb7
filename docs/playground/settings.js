// The Playground's settings → the canonical config the engine runs, the scenario as TOML and
// the `slowstart run` command that gives the same numbers. A `[path]` key fills the fields
// python/slowstart/loading/scenario.py `expand_path` fills (crates/slowstart-config/src/keys.rs
// lists them): link 1 is the bottleneck, a reverse key left out follows its forward key, the
// RTT is split rtt // 2 forward and the rest back, and a buffer in BDPs or time is resolved
// from the rate and RTT, rounded half up (units.py `resolve_buffer`). tests/test_playground.py
// holds these to the loader's output under Node.
//
// Settings: {rate_bps, rtt_ns, buffer_bdp: [num, den], loss, initcwnd, cc: {name, params}},
// each left out (undefined) when the scenario's own value stands.
(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory();
  else root.PlaygroundSettings = factory();
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const NS_PER_S = 1000000000n;

  // Nearest integer to num / den (both BigInt, positive), halves up.
  function roundHalfUp(num, den) {
    return (2n * num + den) / (2n * den);
  }

  // The canonical queue limit of a buffer as written ({packets, bytes, time_ns, bdp}): a time
  // at its direction's rate, BDPs of the path's (forward) rate and RTT.
  function resolveBuffer(buffer, rateBps, rttNs, pathRateBps) {
    if (buffer.packets) return { packets: Number(buffer.packets[0] / buffer.packets[1]) };
    if (buffer.bytes !== null && buffer.bytes !== undefined) return { bytes: buffer.bytes };
    const rate = BigInt(rateBps);
    if (buffer.time_ns !== null && buffer.time_ns !== undefined) {
      return { bytes: Number(roundHalfUp(rate * BigInt(buffer.time_ns), 8n * NS_PER_S)) };
    }
    const [n, d] = buffer.bdp.map(BigInt);
    const bdpBits = BigInt(pathRateBps ?? rateBps) * BigInt(rttNs);
    return { bytes: Number(roundHalfUp(n * bdpBits, d * 8n * NS_PER_S)) };
  }

  // The config `scenario` (an entry of data.json) runs with `settings`.
  function apply(scenario, settings) {
    const config = JSON.parse(JSON.stringify(scenario.config));
    const s = settings || {};
    const p = scenario.path;
    if (p) {
      const [fwd, rev] = [config.links[1].forward, config.links[1].reverse];
      const rate = s.rate_bps ?? p.rate_bps;
      const rtt = s.rtt_ns ?? p.rtt_ns;
      if (s.rate_bps !== undefined) {
        fwd.rate_bps = rate;
        if (!p.reverse_rate) rev.rate_bps = rate;
      }
      if (s.rtt_ns !== undefined) {
        fwd.delay_ns = Math.floor(rtt / 2);
        rev.delay_ns = rtt - Math.floor(rtt / 2);
      }
      if (s.rate_bps !== undefined || s.rtt_ns !== undefined || s.buffer_bdp !== undefined) {
        const buffer = s.buffer_bdp ? { bdp: s.buffer_bdp } : p.buffer;
        fwd.queue = resolveBuffer(buffer, rate, rtt);
        if (!p.reverse_buffer) rev.queue = resolveBuffer(buffer, rev.rate_bps, rtt, rate);
      }
      if (s.loss !== undefined) {
        fwd.loss = s.loss;
        delete fwd.gilbert_elliott;
      }
    }
    for (const flow of config.flows) {
      if (s.initcwnd !== undefined) flow.initcwnd = s.initcwnd;
      if (s.cc) flow.cc = { name: s.cc.name, params: { ...s.cc.params } };
    }
    return config;
  }

  // `name:key=value,...`, the core's cc grammar (crates/slowstart-config/src/cc_text.rs).
  function ccText(cc) {
    const params = Object.entries(cc.params || {}).map(([k, v]) => `${k}=${v}`);
    return params.length ? `${cc.name}:${params.join(",")}` : cc.name;
  }

  // A decimal text of num/den when den is a power of ten (the slider's BDP steps).
  function decimal([n, d]) {
    const places = Math.round(Math.log10(d));
    return (n / d).toFixed(places);
  }

  function time(ns) {
    return ns % 1000000 === 0 ? `${ns / 1000000}ms` : `${ns}ns`;
  }

  // Each changed key as the scenario would write it: [table, key, TOML value].
  function keys(scenario, s) {
    const out = [];
    if (scenario.path) {
      if (s.rate_bps !== undefined) out.push(["path", "rate", `"${s.rate_bps}bps"`]);
      if (s.rtt_ns !== undefined) out.push(["path", "rtt", `"${time(s.rtt_ns)}"`]);
      if (s.buffer_bdp) out.push(["path", "buffer", `"${decimal(s.buffer_bdp)}bdp"`]);
      if (s.loss !== undefined) out.push(["path", "loss", String(s.loss)]);
    }
    if (s.initcwnd !== undefined) out.push(["flow", "initcwnd", String(s.initcwnd)]);
    if (s.cc) out.push(["flow", "cc", JSON.stringify(ccText(s.cc))]);
    return out;
  }

  // The `slowstart run` command that gives the page's numbers.
  function command(scenario, settings) {
    const s = settings || {};
    const words = ["slowstart", "run", scenario.name];
    if (s.cc) words.push("--cc", `'${ccText(s.cc)}'`);
    for (const [table, key, value] of keys(scenario, s)) {
      if (key === "cc") continue;
      const bare = value.replace(/^"|"$/g, "");
      if (table === "path") words.push("--set", `path.${key}=${bare}`);
      else scenario.config.flows.forEach((_, i) => words.push("--set", `flow.${i}.${key}=${bare}`));
    }
    return words.join(" ");
  }

  // The scenario's TOML with the settings written in: a key of [path] or of each [[flow]]
  // replaced where the table has it, added at the end of the table where it does not.
  function toml(scenario, settings) {
    const lines = scenario.toml.split("\n");
    const changes = keys(scenario, settings || {});
    const out = [];
    let table = null;
    let pending = [];
    const flush = () => {
      for (const [, key, value] of pending) out.push(`${key} = ${value}`);
      pending = [];
    };
    for (const line of lines) {
      const header = line.match(/^\s*\[\[?\s*([A-Za-z0-9_.-]+)\s*\]\]?/);
      if (header) {
        flush();
        table = header[1];
        out.push(line);
        pending = changes.filter(([t]) => t === table);
        continue;
      }
      const kv = line.match(/^(\s*)([A-Za-z0-9_-]+)\s*=/);
      const hit = kv && pending.find(([, key]) => key === kv[2]);
      if (hit) {
        out.push(`${kv[1]}${hit[1]} = ${hit[2]}`);
        pending = pending.filter((c) => c !== hit);
      } else {
        out.push(line);
      }
    }
    flush();
    return out.join("\n");
  }

  return { apply, command, toml, ccText, resolveBuffer };
});
