"""`slowstart reproduce links`: every slow start in the library over five kinds of bottleneck.

Not a publication: issue 13's question of how each slow start fares behind a shallow and a deep
drop-tail buffer, behind CoDel, and over recorded LTE links whose rate changes every
millisecond. The path is 20 Mbps with a 60 ms RTT (`scenarios/slow-start-links.toml`); the LTE
rows replace its rate by the Verizon and AT&T downlink traces (and the ACK path by their uplink
traces) from `../shared/traces/`, and are skipped with a reason where that folder is absent.
Per run: time to full bandwidth (95% of the bottleneck's mean rate over one base RTT),
slow-start drops, and the 95th percentile of the queueing delay arriving packets find at the
bottleneck (queue bytes over the mean rate).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from slowstart import lazy
from slowstart.paths import REPO
from slowstart.plot import heat_colours
from slowstart.reproductions.experiment import Variant, runnable
from slowstart.running.api import Result

if TYPE_CHECKING:
    from slowstart.reproductions.experiment import Experiment

mpl_figure = lazy.module("matplotlib.figure")
np = lazy.module("numpy")


SHARED_TRACES = REPO.parent / "shared" / "traces"

ALGORITHMS: tuple[tuple[str, str], ...] = (
    ("reno", "reno"),
    ("cubic, HyStart", "cubic:slow_start=hystart"),
    ("cubic, HyStart++", "cubic:slow_start=hystart++"),
    ("cubic, SEARCH", "cubic:slow_start=search"),
    ("hystart-pb", "hystart-pb"),
    ("bbr", "bbr"),
    ("bbr1", "bbr1"),
    ("ledbat", "ledbat"),
)


def _trace(name: str) -> str:
    return f'{{trace = "{SHARED_TRACES / name}"}}'


# label -> (overrides, the trace files it needs)
LINKS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("drop-tail 1 BDP", ("path.buffer=1bdp",), ()),
    ("drop-tail 10 BDP", ("path.buffer=10bdp",), ()),
    ("CoDel", ("path.buffer=10bdp", "path.queue=codel"), ()),
    (
        "Verizon LTE",
        (
            f"path.rate={_trace('Verizon-LTE-short.down')}",
            f"path.reverse_rate={_trace('Verizon-LTE-short.up')}",
            "path.buffer=10bdp",
        ),
        ("Verizon-LTE-short.down", "Verizon-LTE-short.up"),
    ),
    (
        "AT&T LTE",
        (
            f"path.rate={_trace('ATT-LTE-driving-2016.down')}",
            f"path.reverse_rate={_trace('ATT-LTE-driving-2016.up')}",
            "path.buffer=10bdp",
        ),
        ("ATT-LTE-driving-2016.down", "ATT-LTE-driving-2016.up"),
    ),
)


def variants() -> tuple[Variant, ...]:
    """The experiment's variants: every algorithm over every link, an LTE link's skipped with
    a reason where its trace files are absent (`missing_traces`)."""
    return tuple(
        Variant(
            f"{algo} | {link}",
            (f'flow.0.cc="{cc}"', *overrides),
            None,
            unavailable=(lambda files=files: missing_traces(files)) if files else None,
        )
        for algo, cc in ALGORITHMS
        for link, overrides, files in LINKS
    )


def missing_traces(files: tuple[str, ...]) -> str | None:
    """Why a row cannot run here, if it cannot."""
    absent = [f for f in files if not (SHARED_TRACES / f).is_file()]
    if absent:
        return f"recorded traces not present at {SHARED_TRACES} ({', '.join(absent)})"
    return None


def p95_queue_delay_s(result: Result) -> float | None:
    """95th percentile of the bottleneck queue's delay as sampled at each arrival."""
    q = result.queues
    q = q[q["link"] == "bottleneck"]
    if not len(q):
        return None
    rate = next(x for x in result.summary["links"] if x["name"] == "bottleneck")["rate_bps"]
    return float(np.percentile(q["queue_bytes"].to_numpy() * 8.0 / rate, 95))


def facts(result: Result) -> dict[str, float | int | None]:
    f = result.summary["flows"][0]
    return {
        "time_to_full_bw_s": f["time_to_full_bw_s"],
        "slow_start_drops": f["slow_start_drops"],
        "p95_queue_delay_s": p95_queue_delay_s(result),
    }


def _cell(v: float | int | None, unit: str) -> str:
    if v is None:
        return "never"
    if unit == "ms":
        return f"{v * 1e3:.0f} ms"
    if unit == "s":
        return f"{v:.2f} s"
    return f"{v}"


def links_figures(exp: Experiment, results: list[Result], out: Path) -> list[Path]:
    """A markdown table (algorithm × link: time to full bandwidth / slow-start drops / p95
    queueing delay) and a figure of the three as heat maps."""
    ran = [v.label for v in exp.variants if runnable(v) is None]
    by = dict(zip(ran, [facts(r) for r in results], strict=True))
    algos = [a for a, _ in ALGORITHMS]
    links = [lab for lab, _, _ in LINKS if any(k.endswith(" | " + lab) for k in by)]
    lines = [
        "| algorithm | " + " | ".join(links) + " |",
        "| --- | " + " | ".join("---" for _ in links) + " |",
    ]
    for a in algos:
        cells = []
        for link in links:
            f = by.get(f"{a} | {link}")
            cells.append(
                "-"
                if f is None
                else " / ".join(
                    (
                        _cell(f["time_to_full_bw_s"], "s"),
                        _cell(f["slow_start_drops"], ""),
                        _cell(f["p95_queue_delay_s"], "ms"),
                    )
                )
            )
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    table = out / f"{exp.name}-table.md"
    table.write_text(
        "time to full bandwidth / slow-start drops / p95 queueing delay\n\n"
        + "\n".join(lines)
        + "\n",
        encoding="utf-8",
    )
    fig = mpl_figure.Figure(figsize=(4.2 * 3, 0.9 + 0.45 * len(algos)), layout="constrained")
    axes = fig.subplots(1, 3)
    for ax, (key, title, scale) in zip(
        axes,
        (
            ("time_to_full_bw_s", "time to full bandwidth (s)", 1.0),
            ("slow_start_drops", "slow-start drops", 1.0),
            ("p95_queue_delay_s", "p95 queueing delay (ms)", 1e3),
        ),
        strict=True,
    ):
        grid = np.full((len(algos), len(links)), np.nan)
        for i, a in enumerate(algos):
            for j, link in enumerate(links):
                f = by.get(f"{a} | {link}")
                if f is not None and f[key] is not None:
                    grid[i, j] = f[key] * scale
        im = ax.imshow(grid, aspect="auto", cmap=heat_colours())
        fig.colorbar(im, ax=ax, shrink=0.8, label=title)
        ax.set_xticks(range(len(links)), links, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(len(algos)), algos if ax is axes[0] else [""] * len(algos))
        ax.set_title(title, fontsize=10)
        known = grid[~np.isnan(grid)]
        lo, hi = (known.min(), known.max()) if known.size else (0.0, 0.0)
        for i in range(len(algos)):
            for j in range(len(links)):
                v = grid[i, j]
                whole = key == "slow_start_drops" or v >= 10
                text = "never" if np.isnan(v) else (f"{v:.0f}" if whole else f"{v:.2f}")
                dark = not np.isnan(v) and hi > lo and (v - lo) / (hi - lo) > 0.55
                colour = "w" if dark else "k"
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color=colour)
    png = out / f"{exp.name}.png"
    fig.savefig(png, dpi=110)
    return [table, png]
