"""Figures built without pyplot, so they need no display and leave no global state."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from slowstart import lazy

if TYPE_CHECKING:
    from matplotlib.figure import Figure

mpl = lazy.module("matplotlib")
mpl_figure = lazy.module("matplotlib.figure")
mpl_lines = lazy.module("matplotlib.lines")
np = lazy.module("numpy")
pd = lazy.module("pandas")


# Every heat map's colours (#40): in each, lower is better (a time, drops, a delay, a rank) and
# drawn light, worse is darker; a missing value is grey, never a colour of the scale, and its
# cell says why.
HEAT_COLOURS = "viridis_r"
MISSING_COLOUR = "0.82"


def heat_colours() -> Any:
    """The heat maps' colour map, grey where a value is missing (NaN)."""
    return mpl.colormaps[HEAT_COLOURS].with_extremes(bad=MISSING_COLOUR)


# A summary field's unit, by the suffix its name ends with (the core's naming: `*_s` seconds,
# `*_bps` bits per second, `*_bytes` bytes; crates/slowstart-config/src/trace.rs).
FIELD_UNITS = {
    "_s": "s",
    "_ms": "ms",
    "_bps": "bit/s",
    "_bytes": "bytes",
    "_bdp": "x BDP",
    "_segments": "segments",
}


def axis_label(field: str) -> str:
    """A summary field as an axis reads it, quantity and unit: `completion_s` is "completion
    (s)", `goodput_bps` "goodput (bit/s)", `retransmits` "retransmits (count)"."""
    for suffix, unit in FIELD_UNITS.items():
        if field.endswith(suffix):
            return f"{field[: -len(suffix)].replace('_', ' ')} ({unit})"
    return f"{field.replace('_', ' ')} (count)"


PHASE_COLOURS = {
    "slow_start": "#4c9be8",
    "limited_slow_start": "#7fd3f0",
    "conservative_slow_start": "#9be3c4",
    "congestion_avoidance": "#bdbdbd",
    "recovery": "#f4a259",
    "rto_recovery": "#e05a5a",
    "startup": "#4c9be8",
    "drain": "#b39ddb",
    "probe_bw": "#bdbdbd",
    "probe_rtt": "#f7d87c",
}


def phase_spans(t: np.ndarray, codes: np.ndarray) -> list[tuple[int, float, float]]:
    """(code, start, end) for each run of one phase; a run lasts until the next run starts."""
    if len(t) == 0:
        return []
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    ends = np.r_[t[starts[1:]], t[-1]]
    return [(int(codes[i]), float(t[i]), float(e)) for i, e in zip(starts, ends, strict=True)]


def _shade_phases(ax, t: np.ndarray, phase: pd.Categorical, seen: set[str]) -> None:
    """Shade the time each phase held behind the lines, one collection per phase."""
    spans = phase_spans(t, np.asarray(phase.codes))
    for code, name in enumerate(phase.categories):
        xranges = [(a, b - a) for c, a, b in spans if c == code]
        if not xranges:
            continue
        label = None if name in seen else name.replace("_", " ")
        seen.add(name)
        ax.broken_barh(
            xranges,
            (0, 1),
            transform=ax.get_xaxis_transform(),
            facecolor=PHASE_COLOURS.get(name, "#eeeeee"),
            alpha=0.35,
            linewidth=0,
            label=label,
        )


def plot_cwnd(flows: pd.DataFrame, title: str | None = None) -> Figure:
    """cwnd and bytes in flight (MB) against time, one panel per flow, phases shaded."""
    ids = sorted(flows["flow"].unique()) or [0]
    fig = mpl_figure.Figure(figsize=(9, 2.2 + 2.0 * len(ids)), layout="constrained")
    axes = fig.subplots(len(ids), 1, sharex=True, squeeze=False)[:, 0]
    seen: set[str] = set()
    for ax, fid in zip(axes, ids, strict=True):
        rows = flows[flows["flow"] == fid]
        t = rows["t_s"].to_numpy()
        if len(rows):
            _shade_phases(ax, t, rows["phase"].array, seen)
        ax.step(t, rows["cwnd_bytes"] / 1e6, where="post", color="#1f3b73", lw=1.2, label="cwnd")
        ax.step(
            t,
            rows["inflight_bytes"] / 1e6,
            where="post",
            color="#c2410c",
            lw=0.8,
            label="in flight",
        )
        ax.set_ylabel(f"flow {fid}\nMB")
        ax.set_ylim(bottom=0)
        ax.margins(x=0)
    axes[-1].set_xlabel("time (s)")
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        more = ax.get_legend_handles_labels()
        for h, lab in zip(*more, strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside right upper", fontsize=8)
    if title:
        axes[0].set_title(title)
    return fig


# Past this many curves on one axes, curves differ by dash as well as colour.
COLOURS = 8
DASHES = ("-", (0, (5, 2)), (0, (1, 1)), (0, (6, 2, 1, 2)))


def curve_style(i: int) -> dict[str, Any]:
    """The i-th curve's colour and dash: eight colours, then the eight again dashed, ..."""
    return {"color": f"C{i % COLOURS}", "linestyle": DASHES[(i // COLOURS) % len(DASHES)]}


def plot_overlay(
    curves: Iterable[tuple[str, pd.DataFrame, float | None]],
    title: str,
    flow: int = 0,
    unit: float = 1e6,
    spans: Sequence[tuple[float, float, str]] = (),
) -> Figure:
    """cwnd of one flow from several runs on one axis (MB by default); each curve may carry a
    time to mark with a dashed vertical line of its colour (a published value), which the
    legend then explains. `spans` shade intervals, (start s, end s, label), behind the curves
    (cross traffic's sending). Past eight curves, dashes tell them apart; the legend sits
    outside the axes, so it covers no data."""
    fig = mpl_figure.Figure(figsize=(11, 4.5), layout="constrained")
    ax = fig.subplots()
    marked = False
    for start, end, label in spans:
        ax.axvspan(start, end, color="0.88", zorder=0, label=label)
    for i, (label, flows, mark) in enumerate(curves):
        rows = flows[flows["flow"] == flow]
        style = curve_style(i)
        ax.step(rows["t_s"], rows["cwnd_bytes"] / unit, where="post", lw=1.1, label=label, **style)
        if mark is not None:
            ax.axvline(mark, color=style["color"], ls="--", lw=0.8, alpha=0.7)
            marked = True
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (MB)" if unit == 1e6 else "cwnd")
    ax.set_ylim(bottom=0)
    ax.margins(x=0)
    handles, labels = ax.get_legend_handles_labels()
    if marked:
        handles.append(mpl_lines.Line2D([], [], color="grey", ls="--", lw=0.8))
        labels.append("published value (thin dashed, the curve's colour)")
    fig.legend(handles, labels, loc="outside right upper", fontsize=8)
    ax.set_title(title, fontsize=10)
    return fig


def plot_verdicts(
    title: str,
    rows: Iterable[tuple[str, float | None, float | None, str, float, str]],
) -> Figure | None:
    """What a reproduction judges: per variant (label, ours, published, bound, tolerance,
    unit), ours as a fraction of the published value, the tolerance band shaded (one-sided
    for a published bound). Variants without both values are left out; None if none has."""
    rows = [r for r in rows if r[1] is not None and r[2]]
    if not rows:
        return None
    fig = mpl_figure.Figure(figsize=(11, 0.9 + 0.42 * len(rows)), layout="constrained")
    ax = fig.subplots()
    for y, (_label, ours, published, bound, tol, unit) in enumerate(rows):
        lo, hi = (
            (0.0, 1 + tol)
            if bound == "<"
            else (1 - tol, 3.0)
            if bound == ">"
            else (1 - tol, 1 + tol)
        )
        ax.barh(y, hi - lo, left=lo, height=0.7, color="#d9ead3", zorder=0)
        ratio = ours / published
        ok = lo <= ratio <= hi
        ax.plot([ratio], [y], "o", color="#2e7d32" if ok else "#c62828", zorder=3)
        ax.annotate(
            f"{ours:.3g}{unit} vs {'' if bound == '=' else bound}{published:g}{unit}",
            (ratio, y),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            fontsize=7,
        )
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ratios = [r[1] / r[2] for r in rows]
    ax.set_xlim(0, max(2.0, max(ratios) * 1.3))
    ax.set_xlabel("ours / published (dashed: published; green band: within tolerance)")
    ax.set_title(title, fontsize=10)
    return fig


def plot_request_ramp(
    runs: Iterable[tuple[str, pd.DataFrame, pd.DataFrame, float | None]],
    title: str,
    flow: int = 0,
    until_s: float | None = None,
) -> Figure:
    """The libtorrent seed's figures, one panel per run (label, flows, apps, slow-start exit):
    cwnd and bytes in flight (kB) and, on the right axis, outstanding requests."""
    runs = list(runs)
    fig = mpl_figure.Figure(figsize=(9, 0.8 + 2.8 * len(runs)), layout="constrained")
    axes = fig.subplots(len(runs), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (label, flows, apps, exit_s) in zip(axes, runs, strict=True):
        f = flows[flows["flow"] == flow]
        a = apps[apps["flow"] == flow] if len(apps) else apps
        if until_s is not None:
            f = f[f["t_s"] <= until_s]
            a = a[a["t_s"] <= until_s] if len(a) else a
        ax.step(f["t_s"], f["cwnd_bytes"] / 1e3, where="post", color="#7bc67b", lw=1.3)
        ax.step(f["t_s"], f["inflight_bytes"] / 1e3, where="post", color="#1b5e20", lw=0.8)
        ax.set_ylabel(f"{label}\nkB")
        ax.set_ylim(bottom=0)
        ax.margins(x=0)
        right = ax.twinx()
        if len(a):
            right.step(a["t_s"], a["outstanding_requests"], where="post", color="#d62728", lw=0.9)
        right.set_ylabel("outstanding requests", color="#d62728")
        right.set_ylim(bottom=0)
        if exit_s is not None:
            ax.axvline(exit_s, color="#444444", ls="--", lw=0.8)
            ax.annotate(
                f"leaves slow start {exit_s:.2f} s",
                (exit_s, 0.92),
                xycoords=("data", "axes fraction"),
                xytext=(4, 0),
                textcoords="offset points",
                fontsize=8,
            )
    axes[-1].set_xlabel("time since the connection started (s)")
    handles = [
        axes[0].plot([], [], color="#7bc67b", lw=1.3)[0],
        axes[0].plot([], [], color="#1b5e20", lw=0.8)[0],
        axes[0].plot([], [], color="#d62728", lw=0.9)[0],
    ]
    fig.legend(
        handles,
        ["cwnd", "bytes in flight", "outstanding requests"],
        loc="outside lower center",
        ncols=3,
        fontsize=8,
    )
    fig.suptitle(title, fontsize=10)
    return fig


def plot_heatmap(
    values: np.ndarray,
    labels: np.ndarray,
    rows: list[int],
    cols: list[int],
    title: str,
    colour_label: str,
    row_name: str = "initcwnd",
    col_name: str = "initrwnd",
) -> Figure:
    """A grid of `values` (rows × cols) coloured, each cell annotated with `labels`."""
    fig = mpl_figure.Figure(
        figsize=(1.2 + 1.1 * len(cols), 1.2 + 0.8 * len(rows)), layout="constrained"
    )
    ax = fig.subplots()
    image = ax.imshow(values, cmap=heat_colours(), aspect="auto", origin="lower")
    ax.set_xticks(range(len(cols)), [str(c) for c in cols])
    ax.set_yticks(range(len(rows)), [str(r) for r in rows])
    ax.set_xlabel(col_name)
    ax.set_ylabel(row_name)
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    for i in range(len(rows)):
        for j in range(len(cols)):
            dark = hi > lo and (values[i, j] - lo) / (hi - lo) > 0.55
            ax.text(
                j,
                i,
                labels[i, j],
                ha="center",
                va="center",
                fontsize=7,
                color="white" if dark else "black",
            )
    fig.colorbar(image, ax=ax, label=colour_label)
    ax.set_title(title, fontsize=10)
    return fig
