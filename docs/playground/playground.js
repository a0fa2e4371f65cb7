// The Playground page (docs/playground.md): scenarios and controllers in, runs in a Web Worker
// (worker.js), figures drawn with Plotly (the report's library, python/slowstart/reports/).
// Settings → `--set` items, the engine's request and the command: settings.js. The scenario
// runs as TOML (the box, starting with the scenario's file), read by the core's loader in the
// engine. A page address such as playground/?scenario=satellite&cc=reno,cubic picks the
// scenario and controllers.
"use strict";

(function () {
  const S = self.PlaygroundSettings;
  const $ = (id) => document.getElementById(id);
  const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"];
  const PHASE_COLORS = ["#a6cee3", "#fdbf6f", "#fb9a99", "#b2df8a", "#cab2d6", "#ffff99",
    "#1f78b4", "#e31a1c", "#33a02c", "#6a3d9a", "#ff7f00", "#b15928"];
  const LOSSES = [0, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 0.01, 0.02, 0.05];
  const OWN = "(the scenario's)";

  let data = null;
  let scenario = null;
  let settings = {};
  let worker = null;
  let nextId = 0;
  let pending = null; // {id, resolve}
  let generation = 0;
  let timer = null;

  // --- the worker ---------------------------------------------------------------------------

  function startWorker() {
    worker = new Worker("worker.js");
    worker.onmessage = (m) => {
      if (!pending || m.data.id !== pending.id) return;
      if (m.data.progress !== undefined) {
        pending.onProgress(m.data.progress);
        return;
      }
      const p = pending;
      pending = null;
      p.resolve(m.data);
    };
  }

  function runInWorker(scenarioRequest, onProgress) {
    return new Promise((resolve) => {
      pending = { id: ++nextId, resolve, onProgress };
      worker.postMessage({ id: pending.id, scenario: scenarioRequest });
    });
  }

  function stop() {
    generation++;
    if (pending) {
      worker.terminate();
      pending.resolve({ ok: false, stopped: true });
      pending = null;
      startWorker();
    }
    status("stopped", "stopped");
    $("pg-stop").disabled = true;
  }

  // --- settings: controllers and sliders ----------------------------------------------------

  // "key=value,..." → params, numbers and booleans as the cc grammar reads them.
  function parseParams(text) {
    const params = {};
    for (const item of text.split(",").map((t) => t.trim()).filter(Boolean)) {
      const [key, ...rest] = item.split("=");
      const value = rest.join("=").trim();
      if (/^-?\d+$/.test(value)) params[key.trim()] = Number(value);
      else if (/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value)) params[key.trim()] = Number(value);
      else if (value === "true" || value === "false") params[key.trim()] = value === "true";
      else params[key.trim()] = value;
    }
    return params;
  }

  function addController(name, params) {
    const row = document.createElement("div");
    row.className = "pg-controller";
    const select = document.createElement("select");
    for (const n of [OWN, ...data.algorithms.map((a) => a.name)]) select.add(new Option(n, n));
    select.value = name || OWN;
    const text = document.createElement("input");
    text.type = "text";
    text.size = 40;
    text.value = params || "";
    const hint = () => {
      const a = data.algorithms.find((x) => x.name === select.value);
      text.placeholder = a ? a.params.map((p) => `${p.name}=${p.default}`).join(",") : "";
      text.disabled = !a;
    };
    hint();
    const remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = "remove";
    remove.onclick = () => {
      if ($("pg-controllers").children.length > 1) row.remove();
      changed();
    };
    select.onchange = () => {
      hint();
      changed();
    };
    text.onchange = changed;
    row.append(select, " parameters ", text, " ", remove);
    $("pg-controllers").append(row);
  }

  function controllers() {
    return [...$("pg-controllers").children].map((row) => {
      const [select, text] = row.querySelectorAll("select, input");
      if (select.value === OWN) return { label: ownLabel(), cc: undefined };
      const cc = { name: select.value, params: parseParams(text.value) };
      return { label: S.ccText(cc), cc };
    });
  }

  function ownLabel() {
    return edited() ? "your scenario's" : scenario.ccs.map(S.ccText).join(" + ");
  }

  // The box's TOML, and whether it is no longer the scenario's file (the command then names
  // it as saved: OWN_FILE).
  const OWN_FILE = "my.toml";
  function tomlText() {
    return $("pg-toml").value;
  }

  function edited() {
    return tomlText() !== scenario.toml;
  }

  function rateText(bps) {
    return bps >= 1e9 ? `${+(bps / 1e9).toPrecision(4)} Gbps` : `${+(bps / 1e6).toPrecision(4)} Mbps`;
  }

  function round3(x) {
    const p = 10 ** (Math.floor(Math.log10(x)) - 2);
    return Math.round(x / p) * p;
  }

  // Each slider: its range, position ↔ value, text, and the setting it writes.
  const SLIDERS = [
    {
      key: "rate_bps", label: "Rate", min: 0, max: 1000,
      value: (p) => p.rate_bps,
      toValue: (x) => Math.round(round3(10 ** (6 + (4 * x) / 1000))),
      toPos: (v) => (1000 * (Math.log10(v) - 6)) / 4,
      text: rateText,
      off: (p) => p.rate_trace,
    },
    {
      key: "rtt_ns", label: "RTT", min: 0, max: 1000,
      value: (p) => p.rtt_ns,
      toValue: (x) => Math.max(1, Math.round(10 ** ((3.3 * x) / 1000))) * 1e6,
      toPos: (v) => (1000 * Math.log10(Math.max(v / 1e6, 1))) / 3.3,
      text: (v) => `${+(v / 1e6).toPrecision(4)} ms`,
    },
    {
      key: "buffer_bdp", label: "Buffer", min: 0, max: 1000,
      value: (p) => p.buffer_bdp,
      toValue: (x) => Math.max(1, Math.round(100 * 10 ** (-2 + (3 * x) / 1000))) / 100,
      toPos: (v) => (v ? (1000 * (Math.log10(v) + 2)) / 3 : 500),
      // A label only (the engine's loader resolves the buffer): the scenario's, until a
      // slider moves the BDP.
      text: (v, p) => {
        const moved = ["buffer_bdp", "rate_bps", "rtt_ns"].some((k) => settings[k] !== undefined);
        if (!moved || !v) return p.buffer_text;
        const rate = settings.rate_bps ?? p.rate_bps;
        const rtt = settings.rtt_ns ?? p.rtt_ns;
        return `${v} BDP (about ${((v * rate * rtt) / 8e9 / 1e6).toPrecision(4)} MB)`;
      },
      off: (p) => p.reverse_buffer,
    },
    {
      key: "initcwnd", label: "Initial window", min: 1, max: 100,
      value: () => scenario.initcwnd,
      toValue: (x) => Number(x),
      toPos: (v) => v,
      text: (v) => `${v} segments`,
      always: true,
    },
    {
      key: "loss", label: "Random loss", min: 0, max: LOSSES.length - 1,
      value: (p) => (p.loss_table ? null : p.loss),
      toValue: (x) => LOSSES[x],
      toPos: (v) => LOSSES.reduce((best, l, i) => (Math.abs(l - v) < Math.abs(LOSSES[best] - v) ? i : best), 0),
      text: (v) => (v === null ? "Gilbert-Elliott (the scenario's)" : `${+(v * 100).toPrecision(3)} %`),
      off: (p) => p.loss_table,
    },
  ];

  function buildSliders() {
    const box = $("pg-sliders");
    box.textContent = "";
    const p = scenario.path;
    for (const s of SLIDERS) {
      const label = document.createElement("label");
      label.className = "pg-slider";
      const input = document.createElement("input");
      input.type = "range";
      input.min = s.min;
      input.max = s.max;
      input.step = 1;
      input.id = `pg-slider-${s.key}`;
      const out = document.createElement("span");
      const usable = (p || s.always) && !(p && s.off && s.off(p));
      input.disabled = !usable;
      const own = p || s.always ? s.value(p) : null;
      input.value = own === null ? (s.min + s.max) / 2 : s.toPos(own);
      input.oninput = () => {
        settings[s.key] = s.toValue(input.value);
        showSettings();
      };
      input.onchange = changed;
      s.show = () => {
        const v = settings[s.key] !== undefined ? settings[s.key] : own;
        out.textContent = usable ? s.text(v, p) : "(not a [path] scenario)";
      };
      label.append(s.label, input, out);
      box.append(label);
    }
  }

  function showSettings() {
    for (const s of SLIDERS) s.show();
    const file = edited() ? OWN_FILE : null;
    const lines = controllers().map((c) => S.command(scenario, { ...settings, cc: c.cc }, file) + " --json");
    $("pg-command").textContent = lines.join("\n");
    $("pg-saved-as").hidden = !file;
  }

  function pickScenario(name) {
    scenario = data.scenarios.find((s) => s.name === name) || data.scenarios[0];
    $("pg-scenario").value = scenario.name;
    $("pg-description").textContent = scenario.description;
    $("pg-toml").value = scenario.toml;
    settings = {};
    buildSliders();
    showSettings();
  }

  function changed() {
    showSettings();
    clearTimeout(timer);
    timer = setTimeout(runAll, 300);
  }

  // --- runs ---------------------------------------------------------------------------------

  function status(text, state) {
    $("pg-status").textContent = text;
    $("pg-status").dataset.state = state;
  }

  async function runAll() {
    clearTimeout(timer);
    const mine = ++generation;
    if (pending) stop();
    generation = mine;
    $("pg-error").hidden = true;
    // The CLI names a scenario whose text names none by its file: the command's.
    const name = edited() ? OWN_FILE.replace(/\.toml$/, "") : scenario.name;
    const jobs = controllers().map((c) => ({
      label: c.label,
      text: S.request(scenario, { ...settings, cc: c.cc }, tomlText(), name),
    }));
    $("pg-stop").disabled = false;
    const started = performance.now();
    const results = [];
    for (const [i, job] of jobs.entries()) {
      status(`running ${job.label}…`, "running");
      const r = await runInWorker(job.text, (f) => ($("pg-progress").value = (i + f) / jobs.length));
      if (mine !== generation || r.stopped) return;
      if (!r.ok) {
        $("pg-error").textContent = r.error;
        $("pg-error").hidden = false;
        status("refused", "error");
        $("pg-stop").disabled = true;
        return;
      }
      results.push({ ...r, label: job.label, summaryObject: JSON.parse(r.summary) });
    }
    $("pg-progress").value = 1;
    $("pg-stop").disabled = true;
    const ms = results.map((r) => `${r.label} ${r.ms.toFixed(0)} ms`).join(", ");
    draw(results);
    // Engine time per run, and the whole from the click to the figures drawn.
    const total = performance.now() - started;
    const state = $("pg-status");
    state.dataset.ms = JSON.stringify(results.map((r) => r.ms));
    state.dataset.totalMs = String(total);
    const runs = `${results.length} run${results.length > 1 ? "s" : ""}`;
    status(`done: ${runs} (${ms} in the engine; ${total.toFixed(0)} ms to the figures)`, "done");
  }

  // --- figures and the table ----------------------------------------------------------------

  // At most `n` points: the largest of each stride (a peak of cwnd or the queue stays).
  function thin(x, y, n) {
    if (x.length <= n) return [x, y];
    const step = Math.ceil(x.length / n);
    const xs = [];
    const ys = [];
    for (let i = 0; i < x.length; i += step) {
      let k = i;
      for (let j = i; j < Math.min(i + step, x.length); j++) if (y[j] > y[k]) k = j;
      xs.push(x[k]);
      ys.push(y[k]);
    }
    return [xs, ys];
  }

  function rowsOf(table, key, value) {
    const out = [];
    const col = table[key];
    for (let i = 0; i < col.length; i++) if (col[i] === value) out.push(i);
    return out;
  }

  function pick(col, rows, f = (v) => v) {
    return rows.map((i) => f(col[i]));
  }

  function phaseShapes(r, flowRows, top) {
    const t = pick(r.columns.flows.t_ns, flowRows, (v) => v / 1e9);
    const ph = pick(r.columns.flows.phase, flowRows);
    const shapes = [];
    let start = 0;
    for (let i = 1; i <= t.length; i++) {
      if (i === t.length || ph[i] !== ph[start]) {
        shapes.push({
          type: "rect", xref: "x", yref: "paper", layer: "below", line: { width: 0 },
          x0: t[start], x1: t[Math.min(i, t.length - 1)], y0: top[0], y1: top[1],
          fillcolor: PHASE_COLORS[ph[start] % PHASE_COLORS.length], opacity: 0.35,
        });
        start = i;
      }
    }
    return shapes.slice(0, 600);
  }

  function draw(results) {
    const cwnd = [];
    const queue = [];
    const goodput = [];
    let shapes = [];
    const phasesSeen = new Set();
    results.forEach((r, k) => {
      const color = COLORS[k % COLORS.length];
      const flows = r.columns.flows;
      const nflows = r.summaryObject.flows.length;
      for (let f = 0; f < nflows; f++) {
        const rows = rowsOf(flows, "flow", f);
        const name = results.length > 1 || nflows > 1 ? `${r.label}${nflows > 1 ? ` flow ${f}` : ""}` : r.label;
        const t = pick(flows.t_ns, rows, (v) => v / 1e9);
        const dash = ["solid", "dash", "dot", "dashdot"][f % 4];
        const [x1, y1] = thin(t, pick(flows.cwnd_bytes, rows, (v) => v / 1e6), 3000);
        cwnd.push({ x: x1, y: y1, name: `${name} cwnd`, mode: "lines", line: { color, dash } });
        const [x2, y2] = thin(t, pick(flows.inflight_bytes, rows, (v) => v / 1e6), 3000);
        cwnd.push({
          x: x2, y: y2, name: `${name} in flight`, mode: "lines",
          line: { color, dash, width: 1 }, opacity: 0.6,
        });
        for (const p of pick(flows.phase, rows)) phasesSeen.add(p);
        if (f === 0) {
          // The first run's phases fill the plot; each further run's, a band along its top.
          const band = k === 0 ? [0, 1] : [1 - 0.04 * k, 1 - 0.04 * (k - 1)];
          shapes = shapes.concat(phaseShapes(r, rows, band));
        }
        // Goodput over bins of a round trip (the flow's base RTT), or a 150th of the run.
        const delivered = pick(flows.delivered_bytes, rows);
        const end = t.length ? t[t.length - 1] : 0;
        const bin = Math.max(end / 150, r.summaryObject.flows[f].base_rtt_s || 0, 0.001);
        const gx = [];
        const gy = [];
        let j = 0;
        let last = 0;
        for (let edge = bin; edge <= end + bin / 2; edge += bin) {
          while (j + 1 < t.length && t[j + 1] <= edge) j++;
          const d = t.length ? delivered[j] : 0;
          gx.push(edge - bin / 2);
          gy.push(((d - last) * 8) / bin / 1e6);
          last = d;
        }
        goodput.push({ x: gx, y: gy, name, mode: "lines", line: { color, dash, shape: "hvh" } });
      }
      // The link direction that queued most, its queue as delay at its rate.
      const links = r.summaryObject.links;
      let busiest = 0;
      links.forEach((l, i) => {
        if (l.max_queue_bytes > links[busiest].max_queue_bytes) busiest = i;
      });
      const rows = rowsOf(r.columns.queues, "link", busiest);
      const rate = links[busiest] ? links[busiest].rate_bps : 1;
      const [qx, qy] = thin(
        pick(r.columns.queues.t_ns, rows, (v) => v / 1e9),
        pick(r.columns.queues.queue_bytes, rows, (v) => (v * 8 * 1000) / rate),
        3000,
      );
      queue.push({ x: qx, y: qy, name: `${r.label} (${links[busiest].name})`, mode: "lines", line: { color } });
    });
    const phaseNames = results.length ? results[0].header.phase_names : [];
    for (const p of [...phasesSeen].sort((a, b) => a - b)) {
      cwnd.push({
        x: [null], y: [null], mode: "markers", name: `phase: ${phaseNames[p] || p}`,
        marker: { symbol: "square", size: 12, color: PHASE_COLORS[p % PHASE_COLORS.length] },
      });
    }
    const layout = (title, y) => ({
      title: { text: title }, height: 380, margin: { t: 40, r: 10, b: 40, l: 60 },
      xaxis: { title: { text: "time (s)" } }, yaxis: { title: { text: y } },
      legend: { orientation: "h", y: -0.2 },
    });
    const config = { responsive: true, displaylogo: false };
    Plotly.react("pg-figure-cwnd", cwnd, { ...layout("cwnd (solid) and bytes in flight, phases shaded", "MB"), shapes }, config);
    Plotly.react("pg-figure-queue", queue, layout("queueing delay at the busiest link direction", "ms"), config);
    Plotly.react("pg-figure-goodput", goodput, layout("goodput (per round trip)", "Mbps"), config);
    table(results);
  }

  const FLOW_COLUMNS = [
    ["bytes_delivered", "delivered (bytes)", (v) => v.toLocaleString("en")],
    ["completion_s", "completion (s)", (v) => v.toFixed(3)],
    ["goodput_bps", "goodput (Mbps)", (v) => (v / 1e6).toFixed(2)],
    ["slow_start_exit_s", "slow start ended (s)", (v) => v.toFixed(3)],
    ["time_to_full_bw_s", "full bandwidth (s)", (v) => v.toFixed(3)],
    ["retransmits", "retransmits", (v) => String(v)],
    ["max_cwnd_bytes", "largest cwnd (bytes)", (v) => v.toLocaleString("en")],
    ["drops", "drops", (v) => String(v)],
  ];

  function table(results) {
    const box = $("pg-summary");
    box.textContent = "";
    const t = document.createElement("table");
    t.id = "pg-table";
    const head = t.createTHead().insertRow();
    for (const h of ["run", "flow", ...FLOW_COLUMNS.map((c) => c[1])]) {
      head.append(Object.assign(document.createElement("th"), { textContent: h }));
    }
    const body = t.createTBody();
    for (const r of results) {
      for (const f of r.summaryObject.flows) {
        const row = body.insertRow();
        row.dataset.run = r.label;
        row.insertCell().textContent = r.label;
        row.insertCell().textContent = `${f.id} (${f.cc})`;
        for (const [key, , fmt] of FLOW_COLUMNS) {
          const cell = row.insertCell();
          cell.dataset.key = key;
          cell.dataset.value = JSON.stringify(f[key]);
          cell.textContent = f[key] === null || f[key] === undefined ? "–" : fmt(f[key]);
        }
      }
    }
    box.append(t);
    // Each run's whole summary, as the engine wrote it (`slowstart run --json` prints the same
    // and its wall time).
    for (const r of results) {
      const d = document.createElement("details");
      d.innerHTML = `<summary>${r.label}: the whole summary (JSON)</summary>`;
      const pre = document.createElement("pre");
      pre.className = "pg-summary-json";
      pre.dataset.run = r.label;
      pre.textContent = r.summary;
      d.append(pre);
      box.append(d);
    }
  }

  // --- the page -----------------------------------------------------------------------------

  function copy(text, button) {
    const done = () => {
      const was = button.textContent;
      button.textContent = "copied";
      setTimeout(() => (button.textContent = was), 1200);
    };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, () => {});
  }

  function registry() {
    const box = $("pg-registry");
    for (const a of data.algorithms) {
      const d = document.createElement("div");
      const h = document.createElement("p");
      h.innerHTML = `<strong></strong> — <span></span> <em></em>`;
      h.querySelector("strong").textContent = a.name;
      h.querySelector("span").textContent = a.summary;
      h.querySelector("em").textContent = `(${a.source})`;
      const ul = document.createElement("ul");
      for (const p of a.params) {
        const li = document.createElement("li");
        li.textContent = `${p.name} = ${p.default} (${p.accepted}): ${p.doc}`;
        ul.append(li);
      }
      d.append(h, ul);
      box.append(d);
    }
  }

  async function main() {
    if (location.protocol === "file:") {
      status("the Playground needs the site served (mkdocs serve, or a web server on site/)", "error");
      return;
    }
    data = await (await fetch("data.json")).json();
    for (const s of data.scenarios) $("pg-scenario").add(new Option(s.name, s.name));
    registry();
    const query = new URLSearchParams(location.search);
    const start = query.get("scenario") || "satellite";
    scenario = data.scenarios.find((s) => s.name === start) || data.scenarios[0];
    const ccs = (query.get("cc") || "").split(",").filter(Boolean);
    if (ccs.length) ccs.forEach((c) => addController(c.split(":")[0], c.split(":").slice(1).join(":")));
    else addController(OWN);
    pickScenario(scenario.name);
    $("pg-scenario").onchange = () => {
      pickScenario($("pg-scenario").value);
      changed();
    };
    $("pg-add").onclick = () => {
      addController(data.algorithms[0].name);
      changed();
    };
    $("pg-reset").onclick = () => {
      pickScenario(scenario.name);
      changed();
    };
    $("pg-run").onclick = () => runAll();
    $("pg-stop").onclick = stop;
    $("pg-run-toml").onclick = () => runAll();
    $("pg-revert-toml").onclick = () => {
      $("pg-toml").value = scenario.toml;
      changed();
    };
    $("pg-toml").oninput = showSettings;
    $("pg-copy-command").onclick = (e) => copy($("pg-command").textContent, e.target);
    $("pg-copy-toml").onclick = (e) => copy(tomlText(), e.target);
    startWorker();
    runAll();
  }

  main().catch((e) => {
    status(`the Playground could not start: ${e.message || e}`, "error");
  });
})();
