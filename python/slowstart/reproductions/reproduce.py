"""Published experiments, as data, and running them beside the published numbers.

To add one, append an `Experiment` to `EXPERIMENTS`: a scenario, overrides shared by all
variants, and per variant its own overrides and the published value of one summary metric. A
variant may read another value (`metric`: a dotted path into the summary such as
`apps.0.objects.0.stalls`, or a function of it) and may compare against a bound (`bound`: "<"
when the publication says "under", ">" for "over"), or measure the whole run, traces included
(`measure`: a function of the `Result`, see `slowstart.running.measures`). A variant may run
another scenario than its experiment's (`scenario`), may have no published value (`published`
None: ours is shown beside the others), and may need algorithms that are not registered yet
(`requires`): it is then reported as pending instead of run. An experiment may draw its own
figures (`figures`) instead of the cwnd overlay, or run its variants itself (`runner`: more than
one run per variant, real runs beside simulated ones, as `slowstart.reproductions.atou` does).
"""

from __future__ import annotations

import os
import textwrap
import tomllib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from slowstart.loading import guests
from slowstart.loading.scenario import load
from slowstart.paths import scenario_path
from slowstart.plot import plot_overlay, plot_verdicts
from slowstart.reproductions.app_figures import request_ramp_figures, window_grid_figures
from slowstart.reproductions.atou import run_atou
from slowstart.reproductions.dctcp_fig17 import run_fig17
from slowstart.reproductions.experiment import (
    VERDICT_RULE,
    Experiment,
    Row,
    Variant,
    missing_algorithms,
    runnable,
    variant_value,
)
from slowstart.reproductions.l4s_figures import (
    l4s_figures,
    rtt_rise_after_first_response_ms,
    rtt_rise_ms,
)
from slowstart.reproductions.ledbat_figures import LEDBAT_HOLD_S, LEDBAT_SETTLED_S, ledbat_figures
from slowstart.reproductions.links_study import links_figures, missing_traces
from slowstart.reproductions.links_study import variants as links_variants
from slowstart.reproductions.net100_cross import run_blast, run_parallel
from slowstart.running.api import Result, run_config
from slowstart.running.batches import open_store
from slowstart.running.measures import (
    Measure,
    acked_until_resume_bdp,
    cwnd_after_recovery_bdp,
    facts_table,
    goodput_mbps,
    settled_queue_delay,
    share_once_avoiding,
)
from slowstart.running.plan import first_object
from slowstart.running.records import Record, run_key, traces_of
from slowstart.running.store import Store


def facts_figures(exp: Experiment, results: list[Result], out: Path) -> list[Path]:
    """The cwnd overlay of the variants that ran and a table of completion, time to full
    bandwidth, slow-start exit, retransmits and largest cwnd in BDPs."""
    labels = [v.label for v in exp.variants if not missing_algorithms(v)]
    curves = [(label, r.flows, None) for label, r in zip(labels, results, strict=True)]
    fig = plot_overlay(curves, exp.title, flow=exp.flow)
    written = [out / f"{exp.name}-cwnd.png", out / f"{exp.name}-table.md"]
    fig.savefig(written[0], dpi=120)
    written[1].write_text(facts_table(labels, results, exp.flow))
    return written


# The functions a data file names (data/*.toml): an experiment's own figures, a runner of its
# variants, a variant's measure of the whole run, a metric computed from the summary.
FIGURES: dict[str, Callable[[Experiment, list[Result], Path], list[Path]]] = {
    "facts": facts_figures,
    "request-ramp": request_ramp_figures,
    "window-grid": window_grid_figures,
    "links": links_figures,
    "ledbat": ledbat_figures,
    "l4s": l4s_figures,
}
RUNNERS: dict[str, Callable[..., tuple[list[Row], list[Path]]]] = {
    "atou": run_atou,
    "blast": run_blast,
    "parallel": run_parallel,
    "dctcp-fig17": run_fig17,
}
MEASURES: dict[str, Measure] = {
    "acked-until-resume-bdp": acked_until_resume_bdp,
    "cwnd-after-recovery-bdp": cwnd_after_recovery_bdp,
    "rtt-rise-ms": rtt_rise_ms,
    "rtt-rise-after-first-response-ms": rtt_rise_after_first_response_ms,
    "queue-delay-settled": settled_queue_delay(LEDBAT_SETTLED_S),
    "share-once-reno-avoids": share_once_avoiding(0, 1, LEDBAT_HOLD_S),
}
METRICS: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "goodput-mbps": goodput_mbps,
    "first-object-round-trips": lambda s: (first_object(s) or {}).get("round_trips"),
}
# Variants made in code, for an experiment whose variants are a grid of settings.
VARIANTS: dict[str, Callable[[], tuple[Variant, ...]]] = {"links-study": links_variants}

EXPERIMENT_KEYS = {"position", "title", "source", "scenario", "metric", "unit", "tolerance"}
EXPERIMENT_KEYS |= {"common", "flow", "figures", "runner", "variant", "variants"}
VARIANT_KEYS = {"label", "overrides", "published", "metric", "bound", "unit", "measure"}
VARIANT_KEYS |= {"scenario", "requires", "traces"}


def _named(table: dict[str, Any], name: str, where: str) -> Any:
    if name not in table:
        raise ValueError(f"{where}: expected one of {', '.join(table)}, got {name!r}")
    return table[name]


def _variant(data: dict[str, Any], where: str) -> Variant:
    unknown = set(data) - VARIANT_KEYS
    if unknown:
        raise ValueError(
            f"{where}: unknown keys {sorted(unknown)} (accepted: {sorted(VARIANT_KEYS)})"
        )
    metric = data.get("metric")
    if isinstance(metric, dict):
        metric = _named(METRICS, metric["function"], f"{where}.metric.function")
    traces = tuple(data.get("traces", ()))
    return Variant(
        label=data["label"],
        overrides=tuple(data["overrides"]),
        published=data.get("published"),
        metric=metric,
        bound=data.get("bound", "="),
        unit=data.get("unit"),
        measure=None
        if "measure" not in data
        else _named(MEASURES, data["measure"], f"{where}.measure"),
        scenario=data.get("scenario"),
        requires=tuple(data.get("requires", ())),
        unavailable=(lambda: missing_traces(traces)) if traces else None,
    )


def experiment_of(name: str, data: dict[str, Any]) -> Experiment:
    """An experiment from its data file's table (`name`: the file's stem)."""
    where = f"reproductions/data/{name}.toml"
    unknown = set(data) - EXPERIMENT_KEYS
    if unknown:
        raise ValueError(
            f"{where}: unknown keys {sorted(unknown)} (accepted: {sorted(EXPERIMENT_KEYS)})"
        )
    if "variants" in data:
        variants = _named(VARIANTS, data["variants"], f"{where}: variants")()
    else:
        variants = tuple(
            _variant(v, f"{where}: variant {i}") for i, v in enumerate(data.get("variant", []))
        )
    return Experiment(
        name=name,
        title=data["title"],
        source=data["source"],
        scenario=data["scenario"],
        metric=data["metric"],
        unit=data["unit"],
        tolerance=data["tolerance"],
        common=tuple(data.get("common", ())),
        variants=variants,
        flow=data.get("flow", 0),
        figures=None
        if "figures" not in data
        else _named(FIGURES, data["figures"], f"{where}: figures"),
        runner=None
        if "runner" not in data
        else _named(RUNNERS, data["runner"], f"{where}: runner"),
    )


def load_experiments() -> dict[str, Experiment]:
    """Every experiment of data/*.toml, shipped with the package (importlib.resources), by
    name (the file's stem), in the order of their `position`."""
    found = []
    for entry in resources.files("slowstart.reproductions").joinpath("data").iterdir():
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
            found.append((data.get("position", 0), entry.name.removesuffix(".toml"), data))
    return {name: experiment_of(name, data) for _, name, data in sorted(found)}


EXPERIMENTS: dict[str, Experiment] = load_experiments()


# Studies of many runs with statistics and figures of their own, run only when named (they
# take minutes): name -> title. `slowstart.reproductions.swarm` runs `swarm`.
STUDIES = {
    "swarm": "BitTorrent swarms over ADSL: uTP vs TCP completion time (Testa & Rossi 2011)",
}


def unknown_experiment(names: list[str]) -> str | None:
    for name in names:
        if name not in EXPERIMENTS and name not in STUDIES:
            accepted = ", ".join([*EXPERIMENTS, *STUDIES])
            return f"reproduce: unknown experiment {name!r} (accepted: {accepted})"
    return None


def check_variants(exp: Experiment) -> None:
    """Load every variant that can run here (a ScenarioError naming the setting if one cannot
    be loaded), so that a bad `--cc` stops the command before any run, not after some."""
    for v in exp.variants:
        if exp.runner is None and runnable(v) is None:
            load(scenario_path(v.scenario or exp.scenario), set=[*exp.common, *v.overrides])


def run_variant(
    exp: Experiment, v: Variant, store: Store | None = None, rerun: bool = False
) -> tuple[Result, bool]:
    """A variant's run, read from `store` when it holds it (unless `rerun`), else made (and
    stored, traces included); and whether it was made."""
    config = load(scenario_path(v.scenario or exp.scenario), set=[*exp.common, *v.overrides])
    key = run_key(config)
    if store is not None and not rerun:
        stored = store.result(key)
        if stored is not None:
            return stored, False
    result = run_config(config)
    if store is not None:
        point = {"experiment": exp.name, "variant": v.label}
        store.put(
            [
                Record(
                    key,
                    config,
                    result.summary,
                    source=f"reproduce {exp.name}",
                    point=point,
                    traces=traces_of(result),
                    wall_s=result.summary.get("wall_s", 0.0),
                )
            ],
            replace=True,  # a rerun, or a stored run whose traces went missing
        )
    return result, True


def with_controllers(exp: Experiment, ccs: Sequence[str]) -> Experiment:
    """`exp` with every variant run again by each controller of `ccs` (a built-in's spec or a
    user's `x.py:Class`, `x.wasm`) beside it: the same settings, the flow's cc replaced (once
    for variants that differ only by their cc); those rows are shown, not judged against the
    published value."""
    if not ccs:
        return exp
    own_cc = f"flow.{exp.flow}.cc="
    extra: dict[tuple[Any, ...], Variant] = {}
    for cc in ccs:
        for v in exp.variants:
            kept = tuple(o for o in v.overrides if not o.startswith(own_cc))
            label = (
                cc_label(cc) if kept == () and v.overrides != () else f"{v.label}, {cc_label(cc)}"
            )
            overrides = (*kept, f"{own_cc}{cc}")
            # One run per setting and measure: variants that differ only by their cc are one.
            extra.setdefault(
                (v.scenario, overrides, v.metric, id(v.measure), v.unit),
                replace(v, label=label, overrides=overrides, published=None),
            )
    # Rows that differ only by their scenario (satellite's 1-BDP rows) are told apart by it.
    added = list(extra.values())
    labels = Counter(v.label for v in added)
    added = [
        replace(v, label=f"{v.label} on {v.scenario or exp.scenario}") if labels[v.label] > 1 else v
        for v in added
    ]
    return replace(exp, variants=(*exp.variants, *added))


def cc_label(cc: str) -> str:
    """A cc value as a row label: a user's controller by its file name and parameters."""
    if guests.is_reference(cc):
        ref, params = guests.split_reference(cc)
        return Path(ref).name + (f":{params}" if params else "")
    return cc


def run_experiment(
    exp: Experiment,
    out_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
    store: str | os.PathLike[str] | Store | None = None,
    rerun: bool = False,
) -> tuple[list[Row], list[Path]]:
    """Run every variant (telling `progress` each label); plot them into `out_dir` if given.
    With `store`, each run is stored (and a stored one read instead of run, unless `rerun`)."""
    the_store, close = open_store(store)
    try:
        return _run_experiment(exp, out_dir, progress, the_store, rerun)
    finally:
        if close and the_store is not None:
            the_store.close()


def _run_experiment(
    exp: Experiment,
    out_dir: str | os.PathLike[str] | None,
    progress: Callable[[str], None] | None,
    store: Store | None,
    rerun: bool,
) -> tuple[list[Row], list[Path]]:
    if exp.runner is not None:  # runs its variants itself (atou: simulated and real)
        return exp.runner(exp, out_dir, progress)
    rows: list[Row] = []
    results: list[Result] = []
    ran: list[Variant] = []
    for v in exp.variants:
        why = runnable(v)
        if why is not None:
            if progress:
                progress(f"{v.label} (skipped: {why})")
            rows.append(Row(v.label, v.published, None, exp.tolerance, v.bound, v.unit, why))
            continue
        if progress:
            progress(v.label)
        result, _made = run_variant(exp, v, store, rerun)
        ours = v.measure(result) if v.measure else variant_value(exp, v, result.summary)
        rows.append(Row(v.label, v.published, ours, exp.tolerance, v.bound, v.unit))
        results.append(result)
        ran.append(v)
    written: list[Path] = []
    if out_dir is not None:
        verdicts = plot_verdicts(
            f"{exp.name}: ours against the published values",
            [
                (
                    r.label,
                    r.ours,
                    r.published,
                    r.bound,
                    r.tolerance,
                    exp.unit if r.unit is None else r.unit,
                )
                for r in rows
            ],
        )
        if verdicts is not None:
            Path(out_dir).mkdir(parents=True, exist_ok=True)
            written.append(Path(out_dir) / f"{exp.name}-verdicts.png")
            verdicts.savefig(written[-1], dpi=120)
    if out_dir is not None and exp.figures is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written += exp.figures(exp, results, out)
    elif out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        curves = [
            (v.label, r.flows, v.published if (v.unit or exp.unit).strip() == "s" else None)
            for v, r in zip(ran, results, strict=True)
        ]
        fig = plot_overlay(curves, exp.title, flow=exp.flow)
        written.append(out / f"{exp.name}-cwnd.png")
        fig.savefig(written[-1], dpi=120)
    return rows, written


def _number(x: float) -> str:
    return f"{x:.1f}" if abs(x) >= 10 else f"{x:.3g}"


def _with_unit(text: str, unit: str) -> str:
    return f"{text} {unit.strip()}" if unit.strip() else text


def headers(exp: Experiment) -> list[str]:
    """The columns of every verdict table: the CLI's, the report's and the README's."""
    return ["variant", "published", "ours", "difference", f"verdict (±{exp.tolerance:.0%})"]


def cells(exp: Experiment, r: Row) -> list[str]:
    """A row as every verdict table shows it: variant, published (with its bound), ours,
    relative difference, verdict by `VERDICT_RULE`."""
    unit = exp.unit if r.unit is None else r.unit
    bound = "" if r.bound == "=" else r.bound
    return [
        r.label,
        "-" if r.published is None else _with_unit(f"{bound}{r.published:g}", unit),
        "-" if r.ours is None else _with_unit(_number(r.ours), unit),
        "-" if r.rel_diff is None else f"{r.rel_diff:+.1%}",
        r.verdict,
    ]


def tally(exp: Experiment, rows: list[Row]) -> str:
    ok = sum(r.verdict == "ok" for r in rows)
    compared = sum(r.published is not None and r.pending is None for r in rows)
    return f"{ok}/{compared} within ±{exp.tolerance:.0%}"


def format_table(exp: Experiment, rows: list[Row]) -> str:
    """A plain table: published, ours, relative difference, verdict."""
    head = f"{exp.name}: {exp.title}\n  source: {exp.source}\n  metric: {exp.metric}"
    table = [headers(exp), *(cells(exp, r) for r in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = [head]
    for row in table:
        label, *numbers, verdict = row
        padded = [n.rjust(w) for n, w in zip(numbers, widths[1:-1], strict=True)]
        lines.append("  " + "  ".join([label.ljust(widths[0]), *padded, verdict]).rstrip())
    lines.append(f"  {tally(exp, rows)}")
    lines.append(textwrap.fill(VERDICT_RULE, 96, initial_indent="  ", subsequent_indent="    "))
    return "\n".join(lines)


def markdown_table(exp: Experiment, rows: list[Row]) -> str:
    """The verdict table as README.md holds it (tests/test_reproduce.py checks the README's
    against `cells`)."""
    lines = [headers(exp), ["---"] * 5, *(cells(exp, r) for r in rows)]
    return "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in lines)
