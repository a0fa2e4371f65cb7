"""One BitTorrent swarm's results (`slowstart run swarm-adsl`): `summary["peers"]`, one row per
peer, and the uplink queue series in `Result.queues`, as a table, statistics and figures. What
`slowstart.running.api`'s Result shows and saves of a swarm; the paper's study of many swarms, which
runs them, is `slowstart.reproductions.swarm`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.loading.defaults import choices, spellings
from slowstart.loading.scenario import core_algorithms
from slowstart.running.result import Result, RunKind, _Pending
from slowstart.tables import fmt_bytes, table

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

mpl_figure = lazy.module("matplotlib.figure")
np = lazy.module("numpy")
pd = lazy.module("pandas")


# The options and their spelling in scenarios and overrides: the core's words (config/swarm.rs).
POPULATIONS = choices("population")
SEEDINGS = choices("seeding")
SPELLING = spellings()
LABELS = {"tcp": "TCP", "utp": "uTP", "mixed": SPELLING["mixed"]}
LABELS |= {seeding: seeding.replace("_", " ") for seeding in SEEDINGS}
COLOURS = {"tcp": "#c2410c", "utp": "#1f3b73", "mixed": "#2e7d32"}
# The paper: per run, the first 50 completions are the transient, the next 50 are kept.
DISCARD, KEEP = 50, 50
PEER_COLUMNS = (
    "id",
    "transport",
    "initial_seed",
    "replacement",
    "arrival_s",
    "done_s",
    "completion_s",
    "completion_rank",
    "left_s",
    "bytes_up",
    "bytes_down",
    "access_delay_s",
    "connections",
)


# --- one run ----------------------------------------------------------------------------------


def peers_frame(summary: dict[str, Any]) -> pd.DataFrame:
    """One row per peer, in id order, with the summary's fields."""
    peers = summary.get("peers") or []
    columns = list(dict.fromkeys([*PEER_COLUMNS, *(k for p in peers for k in p)]))
    frame = pd.DataFrame(peers, columns=columns)
    for col in ("done_s", "completion_s", "left_s"):
        frame[col] = frame[col].astype(float)
    frame["completion_rank"] = frame["completion_rank"].astype("Int64")
    return frame


def kept(peers: pd.DataFrame, discard: int, keep: int) -> pd.DataFrame:
    """The downloads the paper keeps: completion ranks discard + 1 .. discard + keep."""
    rank = peers["completion_rank"]
    mask = rank.notna() & (rank > discard) & (rank <= discard + keep)
    return peers[mask.fillna(False).astype(bool)].sort_values("completion_rank")


def window_start(peers: pd.DataFrame, discard: int) -> float | None:
    """When the measurement window opens: the `discard`-th completion (0 if none are
    discarded); None if the run never got that far."""
    if discard == 0:
        return 0.0
    hit = peers.loc[peers["completion_rank"] == discard, "done_s"]
    return float(hit.iloc[0]) if len(hit) else None


def uplink_samples(queues: pd.DataFrame, start_s: float | None) -> np.ndarray:
    """Uplink occupancy samples (packets) from `start_s` on."""
    if start_s is None or queues.empty:
        return np.zeros(0, dtype=np.int64)
    up = queues["link"].astype(str).str.endswith(".up").to_numpy()
    rows = up & (queues["t_s"].to_numpy() >= start_s)
    return queues["queue_packets"].to_numpy()[rows].astype(np.int64)


def counts(samples: np.ndarray) -> np.ndarray:
    """Histogram of whole-packet occupancies: counts[k] samples held k packets."""
    return np.bincount(samples.astype(np.int64), minlength=1)


def add_counts(many: Iterable[Sequence[int]]) -> np.ndarray:
    total = np.zeros(1, dtype=np.int64)
    for c in many:
        c = np.asarray(c, dtype=np.int64)
        if len(c) > len(total):
            total = np.pad(total, (0, len(c) - len(total)))
        total[: len(c)] += c
    return total


def ccdf(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x = 0, 1, ... packets and P(queue > x) from a histogram."""
    n = hist.sum()
    x = np.arange(len(hist))
    if n == 0:
        return x, np.zeros(len(hist))
    return x, (n - np.cumsum(hist)) / n


def mean_of(hist: np.ndarray) -> float | None:
    n = hist.sum()
    return float(np.arange(len(hist)) @ hist / n) if n else None


def share_above(hist: np.ndarray, k: int) -> float | None:
    """P(queue > k packets)."""
    n = hist.sum()
    return float(hist[k + 1 :].sum() / n) if n else None


def ecdf(values: Iterable[float]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted values and the fraction of values at or below each."""
    x = np.sort(np.asarray(list(values), dtype=float))
    return x, np.arange(1, len(x) + 1) / max(len(x), 1)


def quartiles(values: Iterable[float]) -> tuple[float, float, float] | None:
    x = np.asarray(list(values), dtype=float)
    if len(x) == 0:
        return None
    q1, q2, q3 = np.percentile(x, [25, 50, 75])
    return float(q1), float(q2), float(q3)


def mann_whitney_less(a: Iterable[float], b: Iterable[float]) -> float | None:
    """One-sided p-value that values of `a` tend to be smaller than those of `b` (Mann-Whitney
    U, normal approximation with tie correction and continuity correction)."""
    a, b = np.asarray(list(a), dtype=float), np.asarray(list(b), dtype=float)
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return None
    both = np.concatenate([a, b])
    ranks = pd.Series(both).rank(method="average").to_numpy()
    u = ranks[:n1].sum() - n1 * (n1 + 1) / 2  # pairs where a is larger (ties count half)
    n = n1 + n2
    _, tie_counts = np.unique(both, return_counts=True)
    tie = float((tie_counts**3 - tie_counts).sum())
    var = n1 * n2 / 12 * ((n + 1) - tie / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (u - n1 * n2 / 2 + 0.5) / math.sqrt(var)  # small u: a smaller
    return 0.5 * math.erfc(-z / math.sqrt(2))


def gap(a: float | None, b: float | None) -> float | None:
    """|a - b| relative to their mean."""
    if a is None or b is None or a + b == 0:
        return None
    return abs(a - b) / ((a + b) / 2)


# --- printing and saving one run --------------------------------------------------------------


def _s(x: Any) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1f}"


def _kind(p: pd.Series) -> str:
    if p["initial_seed"]:
        return "seed"
    return "replacement" if p["replacement"] else "leecher"


def format_swarm(
    summary: dict[str, Any], queues: pd.DataFrame | None = None, rows: int = 30
) -> str:
    """The text `slowstart run` prints for a swarm: the swarm line, completion statistics per
    transport, the peers (all of them up to `rows`, else the first few), the uplinks."""

    sw, peers = summary["swarm"], peers_frame(summary)
    if summary.get("mode") == "real":  # real libtorrent peers (real/swarm.py)
        run = (
            f"real, libtorrent {sw.get('libtorrent', '?')}, {summary.get('wall_s', 0):.1f} s "
            f"wall, uplink drops {sw.get('uplink_drops', 0)}"
        )
    else:
        run = (
            f"{summary['sim_time_s']:.1f} s simulated, {summary['events']:,} events, "
            f"{summary.get('wall_s', 0):.2f} s wall"
        )
    head = (
        f"{summary['scenario']}: seed {summary['seed']}, {run}\n"
        f"swarm: {SPELLING.get(sw['population'], sw['population'])}, "
        f"{SPELLING.get(sw['seeding'], sw['seeding'])}; {fmt_bytes(sw['file_bytes'])} file in "
        f"{sw['pieces']} pieces of {sw['blocks_per_piece']} blocks; {sw['peers_joined']} peers "
        f"joined, {sw['completions']} completed"
        + (" (the run stopped there)" if sw.get("stopped_at_completions") else "")
        + f", {sw['connections_opened']:,} connections"
    )
    stat_rows = []
    leechers = peers[~peers["initial_seed"].astype(bool)]
    for name, group in [
        *((t, leechers[leechers["transport"] == t]) for t in ("tcp", "utp")),
        ("all", leechers),
    ]:
        if name != "all" and group.empty:
            continue
        done = group["completion_s"].dropna()
        q = quartiles(done)
        stat_rows.append(
            [LABELS.get(name, name), str(len(group)), str(len(done))]
            + ([_s(q[1]), _s(q[0]), _s(q[2]), _s(done.mean())] if q else ["-"] * 4)
        )
    stats = table(
        ["leechers", "joined", "completed", "completion_s median", "q1", "q3", "mean"], stat_rows
    )
    shown = peers if len(peers) <= rows else peers.head(10)
    peer_rows = [
        [
            str(p["id"]),
            _kind(p),
            str(p["transport"]),
            _s(p["arrival_s"]),
            _s(p["completion_s"]),
            "-" if pd.isna(p["completion_rank"]) else str(p["completion_rank"]),
            fmt_bytes(p["bytes_up"]),
            fmt_bytes(p["bytes_down"]),
            _s(p["left_s"]),
        ]
        for _, p in shown.iterrows()
    ]
    peer_table = table(
        ["peer", "kind", "transport", "arrival_s", "completion_s", "rank", "up", "down", "left_s"],
        peer_rows,
    )
    if len(shown) < len(peers):
        peer_table += (
            f"\n... the first {len(shown)} of {len(peers)} peers (--out DIR writes all of them "
            "to peers.parquet)"
        )
    return "\n\n".join([head, stats, peer_table, format_uplinks(summary, queues)])


def format_uplinks(summary: dict[str, Any], queues: pd.DataFrame | None) -> str:
    """Uplink queues over the whole run: from the series (10 Hz samples) when given, and the
    per-link drops, largest queue and mean queueing delay."""
    ups = [link for link in summary["links"] if link["name"].endswith(".up")]
    if not ups:
        return "uplinks: none"
    delays = np.array([link["mean_queue_delay_s"] for link in ups]) * 1e3
    parts = [
        f"uplinks ({len(ups)}): {sum(link['drops'] for link in ups):,} drops, largest queue "
        f"{max(link['max_queue_packets'] for link in ups)} packets, mean queueing delay "
        f"{np.median(delays):.1f} ms (median over uplinks; largest {delays.max():.1f} ms)"
    ]
    if queues is not None:
        hist = counts(uplink_samples(queues, 0.0))
        if hist.sum():
            parts.append(
                f"uplink occupancy over {hist.sum():,} samples: mean {mean_of(hist):.1f} packets, "
                f"above 100 packets {share_above(hist, 100):.1%} of samples"
            )
    return "\n".join(parts)


class SwarmResult(Result):
    """A swarm's run: `summary["peers"]` one row per peer, `queues` the uplinks' series;
    `connections`, a real swarm's per-connection samples (real/swarm.py), None otherwise."""

    kind = RunKind.SWARM

    def __init__(
        self,
        config: dict[str, Any],
        summary: dict[str, Any],
        flows: pd.DataFrame | _Pending,
        queues: pd.DataFrame | _Pending,
        phase_names: list[str] | None = None,
        apps: pd.DataFrame | _Pending | None = None,
        connections: pd.DataFrame | None = None,
    ) -> None:
        super().__init__(config, summary, flows, queues, phase_names, apps)
        self.connections = connections

    def _what(self) -> str:
        sw = self.summary["swarm"]
        return f"{sw['peers_joined']} peers, {sw['completions']} completed"

    def text(self) -> str:
        return format_swarm(self.summary, self.queues)

    def plot(self, title: str | None = None) -> Figure:
        """Completion time against rank and the uplink queues (plot_run)."""
        ms = packet_ms(self.config["swarm"])
        return plot_run(self.summary, self.queues, ms_per_packet=ms)

    def save(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """A swarm run's files: summary.json, queues.parquet, peers.parquet and swarm.png; a
        real swarm's also connections.parquet, its peers' per-connection samples."""
        paths = [self.save_summary(out_dir)]
        out = paths[0].parent
        paths += [out / n for n in ("queues.parquet", "peers.parquet", "swarm.png")]
        self.queues.to_parquet(paths[1], index=False)
        peers_frame(self.summary).to_parquet(paths[2], index=False)
        self.plot().savefig(paths[3], dpi=120)
        if self.connections is not None:
            paths.append(out / "connections.parquet")
            self.connections.to_parquet(paths[-1], index=False)
        return paths


# --- figures ----------------------------------------------------------------------------------


def new_figure(width: float, height: float) -> Figure:

    return mpl_figure.Figure(figsize=(width, height), layout="constrained")


def packet_ms(config_swarm: dict[str, Any]) -> float:
    """Milliseconds one full-size packet takes on the uplink."""
    tcp = config_swarm["tcp"]
    return (tcp["mss"] + tcp["header_bytes"]) * 8 / config_swarm["access"]["up_bps"] * 1e3


def delay_target(cc: dict[str, Any]) -> float:
    """A delay-based controller's target in seconds: its `target` parameter, else the
    registry's default (ledbat and utp both have one)."""
    if "target" in cc["params"]:
        return float(cc["params"]["target"])

    for algo in core_algorithms() or []:
        if algo["name"] == cc["name"]:
            for param in algo["params"]:
                if param["name"] == "target":
                    return float(param["default"])
    return float("nan")


def ms_axis(ax: Axes, ms_per_packet: float, packets: Sequence[int] = ()) -> None:
    """A second x axis on top: packets as ms at the uplink rate (ticks at `packets` if given)."""
    axis = ax.secondary_xaxis(
        "top", functions=(lambda p: p * ms_per_packet, lambda m: m / ms_per_packet)
    )
    axis.set_xlabel("ms at the uplink rate")
    if packets:
        # On a log axis, only ticks far enough apart for their labels not to overlap.
        shown: list[int] = []
        for b in sorted(packets, reverse=True):
            if not shown or shown[-1] / b >= 1.45:
                shown.append(b)
        axis.set_xticks(
            [b * ms_per_packet for b in shown], [f"{b * ms_per_packet:.0f}" for b in shown]
        )
        axis.minorticks_off()


def rank_panel(ax: Axes, discard: int, series: list[tuple[str, pd.DataFrame]]) -> None:
    """Completion time against completion rank, the discarded ranks shaded."""
    top = max((int(p["completion_rank"].max()) for _, p in series if len(p)), default=discard)
    if discard:
        ax.axvspan(0.5, discard + 0.5, color="#9e9e9e", alpha=0.3, lw=0, label="discarded")
    for name, done in series:
        ax.plot(
            done["completion_rank"].astype(int),
            done["completion_s"],
            marker=".",
            lw=0.8,
            color=COLOURS.get(name, "#555555"),
            label=LABELS.get(name, name),
        )
    ax.set_xlim(0.5, max(top, discard) + 0.5)
    ax.set_xlabel("completion rank")
    ax.set_ylabel("completion time (s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)


def legend(ax: Axes, **kwargs: Any) -> None:
    """A legend, if anything was drawn with a label."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def plot_run(
    summary: dict[str, Any],
    queues: pd.DataFrame,
    discard: int = DISCARD,
    ms_per_packet: float | None = None,
) -> Figure:
    """One run: completion time against rank, per transport, and the CCDF of uplink occupancy
    from the `discard`-th completion on (at most half the completions are discarded);
    `ms_per_packet` adds the queue in ms at the uplink rate on a second axis."""
    peers = peers_frame(summary)
    done = peers[peers["completion_rank"].notna()].sort_values("completion_rank")
    discard = min(discard, len(done) // 2)
    fig = new_figure(11, 4)
    left, right = fig.subplots(1, 2)
    series = [(t, done[done["transport"] == t]) for t in ("tcp", "utp")]
    rank_panel(left, discard, [(t, d) for t, d in series if len(d)])
    legend(left, fontsize="small")
    left.set_title("completion time by completion rank")
    start = window_start(peers, discard)
    hist = counts(uplink_samples(queues, start))
    x, p = ccdf(hist)
    right.step(x, p, where="post", color="#333333")
    right.set_xlabel("uplink queue (packets)")
    right.set_ylabel("P(queue > x)")
    right.set_ylim(0, 1)
    right.set_xlim(left=0)
    right.grid(alpha=0.3)
    right.set_title(f"uplink queues after completion {discard}: {hist.sum():,} samples")
    if ms_per_packet:
        ms_axis(right, ms_per_packet)
    fig.suptitle(
        f"{summary['scenario']}: {SPELLING.get(summary['swarm']['population'], '')} "
        f"{SPELLING.get(summary['swarm']['seeding'], '')}, seed {summary['seed']}"
    )
    return fig


# --- the reproduction -------------------------------------------------------------------------
