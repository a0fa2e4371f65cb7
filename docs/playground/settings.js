// The Playground's settings → `slowstart run`'s options: each slider is the `--set` item of the
// key it stands for, a controller is `--cc`. The engine gets the scenario's TOML with them and
// reads them with the core's loader, the one `slowstart run` uses (crates/slowstart-config/src/
// scenario/, through crates/slowstart-web `ss_run_scenario`): what a `[path]` key fills, its
// defaults and units are the loader's alone. tests/test_playground.py holds the items and the
// command to the loader under Node.
//
// Settings: {rate_bps, rtt_ns, buffer_bdp (a number of BDPs), loss, initcwnd, cc: {name,
// params}}, each left out (undefined) when the scenario's own value stands.
(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory();
  else root.PlaygroundSettings = factory();
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  // `name:key=value,...`, the core's cc grammar (crates/slowstart-config/src/cc_text.rs).
  function ccText(cc) {
    const params = Object.entries(cc.params || {}).map(([k, v]) => `${k}=${v}`);
    return params.length ? `${cc.name}:${params.join(",")}` : cc.name;
  }

  function time(ns) {
    return ns % 1000000 === 0 ? `${ns / 1000000}ms` : `${ns}ns`;
  }

  // The `--set` items the settings stand for; a `[path]` key only where the scenario has one.
  function sets(scenario, settings) {
    const s = settings || {};
    const out = [];
    if (scenario.path) {
      if (s.rate_bps !== undefined) out.push(`path.rate=${s.rate_bps}bps`);
      if (s.rtt_ns !== undefined) out.push(`path.rtt=${time(s.rtt_ns)}`);
      if (s.buffer_bdp !== undefined) out.push(`path.buffer=${s.buffer_bdp}bdp`);
      if (s.loss !== undefined) out.push(`path.loss=${s.loss}`);
    }
    if (s.initcwnd !== undefined) out.push(`flow.*.initcwnd=${s.initcwnd}`);
    return out;
  }

  // What the engine runs (crates/slowstart-web `ScenarioRequest`): the TOML text, the `--set`
  // items and the `--cc`, and the name the CLI gives a scenario whose text names none (its
  // file's: `name`, else the scenario's).
  function request(scenario, settings, toml, name) {
    const s = settings || {};
    return JSON.stringify({
      toml,
      set: sets(scenario, s),
      cc: s.cc ? ccText(s.cc) : null,
      name: name || scenario.name,
    });
  }

  // The `slowstart run` command that gives the page's numbers: of the scenario by its name,
  // or of `file` (the box's TOML saved) where the box no longer holds the scenario's text.
  function command(scenario, settings, file) {
    const s = settings || {};
    const words = ["slowstart", "run", file || scenario.name];
    if (s.cc) words.push("--cc", `'${ccText(s.cc)}'`);
    // Quoted where a shell would read it otherwise (`flow.*.initcwnd`).
    for (const item of sets(scenario, s)) words.push("--set", /[*?\[]/.test(item) ? `'${item}'` : item);
    return words.join(" ");
  }

  return { sets, request, command, ccText };
});
