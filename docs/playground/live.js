// A reproduction's headline figure, run live on its page by the Playground's engine
// (worker.js): each variant's config as `slowstart reproduce` runs it
// (python/slowstart/reports/playground.py `experiment`), ours beside the published value, and
// cwnd of the variants with a published value. A page holds
// <div class="pg-live" data-experiment="NAME" data-base="../../playground/"></div>; with
// data-auto it runs when the page opens, else when its button is pressed.
"use strict";

(function () {
  const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"];

  // `apps.0.objects.0.stalls`-style lookup (experiment.py `summary_value`).
  function valueAt(summary, path) {
    let node = summary;
    for (const part of path.split(".")) {
      if (node === null || node === undefined) return null;
      node = Array.isArray(node) ? node[Number(part)] : node[part];
    }
    return node === undefined ? null : node;
  }

  function verdict(ours, v, tolerance) {
    if (v.published === null) return "-";
    if (ours === null) return "not reached";
    if (v.bound === "<") return ours <= v.published * (1 + tolerance) ? "ok" : "off";
    if (v.bound === ">") return ours >= v.published * (1 - tolerance) ? "ok" : "off";
    return Math.abs(ours - v.published) / v.published <= tolerance ? "ok" : "off";
  }

  function runOne(worker, config, onProgress) {
    return new Promise((resolve) => {
      worker.onmessage = (m) => {
        if (m.data.progress !== undefined) onProgress(m.data.progress);
        else resolve(m.data);
      };
      worker.postMessage({ id: 1, config: JSON.stringify(config) });
    });
  }

  async function live(box) {
    const base = box.dataset.base;
    const all = await (await fetch(`${base}experiments.json`)).json();
    const exp = all[box.dataset.experiment];
    box.innerHTML = `<div class="pg-row"><button type="button" class="md-button">Run live</button>
      <button type="button" class="md-button" disabled>Stop</button>
      <progress max="1" value="0"></progress> <span class="pg-live-status" data-state="idle"></span></div>
      <div class="pg-error" hidden></div>
      <div class="pg-figure pg-live-bars"></div><div class="pg-figure pg-live-cwnd"></div>
      <table class="pg-live-table"></table>`;
    const [runButton, stopButton] = box.querySelectorAll("button");
    const bar = box.querySelector("progress");
    const status = box.querySelector(".pg-live-status");
    const say = (text, state) => {
      status.textContent = text;
      status.dataset.state = state;
    };
    say(`${exp.variants.length} runs of the engine in this page`, "idle");
    let worker = null;
    let stopped = false;
    stopButton.onclick = () => {
      stopped = true;
      if (worker) worker.terminate();
      worker = null;
      say("stopped", "stopped");
      stopButton.disabled = true;
      runButton.disabled = false;
    };
    runButton.onclick = async () => {
      stopped = false;
      runButton.disabled = true;
      stopButton.disabled = false;
      worker = new Worker(`${base}worker.js`);
      const rows = [];
      const started = performance.now();
      for (const [i, v] of exp.variants.entries()) {
        say(`running ${v.label}…`, "running");
        const r = await runOne(worker, v.config, (f) => (bar.value = (i + f) / exp.variants.length));
        if (stopped) return;
        if (!r.ok) {
          box.querySelector(".pg-error").textContent = `${v.label}: ${r.error}`;
          box.querySelector(".pg-error").hidden = false;
          say("refused", "error");
          return;
        }
        const summary = JSON.parse(r.summary);
        rows.push({ v, ours: valueAt(summary, v.metric), r });
      }
      worker.terminate();
      worker = null;
      bar.value = 1;
      stopButton.disabled = true;
      runButton.disabled = false;
      draw(box, exp, rows);
      const ms = performance.now() - started;
      say(`done: ${rows.length} runs in ${(ms / 1000).toFixed(1)} s in this page`, "done");
    };
    if ("auto" in box.dataset) runButton.onclick();
  }

  function draw(box, exp, rows) {
    const labels = rows.map((x) => x.v.label);
    const unit = rows.length ? rows[0].v.unit : "";
    const published = rows.map((x) => x.v.published);
    Plotly.react(
      box.querySelector(".pg-live-bars"),
      [
        { type: "bar", orientation: "h", y: labels, x: rows.map((x) => x.ours), name: "ours (this page)" },
        { type: "bar", orientation: "h", y: labels, x: published, name: "published" },
      ],
      {
        title: { text: exp.title }, barmode: "group", height: 140 + 34 * rows.length,
        margin: { l: 330, r: 10, t: 40, b: 40 }, xaxis: { title: { text: unit } },
        yaxis: { autorange: "reversed" }, legend: { orientation: "h", y: -0.15 },
      },
      { displaylogo: false, responsive: true },
    );
    const drawn = rows.filter((x) => x.v.published !== null);
    const traces = drawn.map((x, k) => {
      const f = x.r.columns.flows;
      const t = [];
      const cwnd = [];
      const step = Math.max(1, Math.ceil(f.t_ns.length / 3000));
      for (let i = 0; i < f.t_ns.length; i += step) {
        if (f.flow[i] !== 0) continue;
        t.push(f.t_ns[i] / 1e9);
        cwnd.push(f.cwnd_bytes[i] / 1e6);
      }
      return { x: t, y: cwnd, name: x.v.label, mode: "lines", line: { color: COLORS[k % COLORS.length] } };
    });
    Plotly.react(
      box.querySelector(".pg-live-cwnd"),
      traces,
      {
        title: { text: "cwnd of the rows with a published value" }, height: 380,
        margin: { l: 60, r: 10, t: 40, b: 40 }, xaxis: { title: { text: "time (s)" } },
        yaxis: { title: { text: "MB" } }, legend: { orientation: "h", y: -0.2 },
      },
      { displaylogo: false, responsive: true },
    );
    const table = box.querySelector(".pg-live-table");
    table.innerHTML = "<thead><tr><th>variant</th><th>published</th><th>ours (this page)</th><th>verdict</th></tr></thead>";
    const body = table.createTBody();
    for (const x of rows) {
      const row = body.insertRow();
      row.dataset.ours = JSON.stringify(x.ours);
      const unit = x.v.unit.trim() ? ` ${x.v.unit.trim()}` : "";
      const bound = x.v.bound === "=" ? "" : x.v.bound;
      const pub = x.v.published === null ? "-" : `${bound}${x.v.published}${unit}`;
      const ours = x.ours === null ? "-" : `${+x.ours.toPrecision(3)}${unit}`;
      for (const text of [x.v.label, pub, ours, verdict(x.ours, x.v, exp.tolerance)]) {
        row.insertCell().textContent = text;
      }
    }
  }

  for (const box of document.querySelectorAll(".pg-live")) {
    if (location.protocol === "file:") {
      box.textContent = "(the live figure needs the site served: mkdocs serve, or a web server on site/)";
      continue;
    }
    live(box).catch((e) => (box.textContent = `the live figure could not start: ${e.message || e}`));
  }
})();
