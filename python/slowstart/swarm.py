"""BitTorrent swarms (Testa and Rossi, "The impact of uTP on BitTorrent completion time"):
the per-peer table of one run, the statistics and figures of the paper, and
`slowstart reproduce swarm`.

One run (`slowstart run swarm-adsl`) gives `summary["peers"]`, one row per peer, and the
uplink queue series in `Result.queues`. The reproduction runs every setting of the paper
(populations tcp, utp and 50-50; seeding never-leave and random-stay) over several seeds,
keeps the downloads after the first `discard` completions, and the 50-50 random-stay swarm
over a range of uplink buffers; runs go over processes with the sweep's runner.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from slowstart.defaults import spellings

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from slowstart.api import Result
    from slowstart.store import Store

POPULATIONS = ("tcp", "utp", "mixed")
SEEDINGS = ("never_leave", "random_stay")
LABELS = {
    "tcp": "TCP",
    "utp": "uTP",
    "mixed": "50-50",
    "never_leave": "never leave",
    "random_stay": "random stay",
}
# The options' spelling in scenarios and overrides: the core's words (config.rs).
SPELLING = spellings()
COLOURS = {"tcp": "#c2410c", "utp": "#1f3b73", "mixed": "#2e7d32"}
# The paper's random-stay uplink queues (Fig. 2): mean packets per population, and the share of
# TCP samples above 100 packets.
PUBLISHED_QUEUE_MEANS = {"tcp": 52.0, "mixed": 34.0, "utp": 6.0}
PUBLISHED_TCP_ABOVE_100 = 0.20
# The paper: per run, the first 50 completions are the transient, the next 50 are kept.
DISCARD, KEEP = 50, 50
# Uplink buffers of the paper's Fig. 3(b), packets, and 2 packets (24 ms at 1 Mbps): the
# paper's smallest, 10 packets, holds 120 ms, more than uTP's 25 ms target.
BUFFERS = (2, 10, 25, 50, 75, 100, 150, 200)
SEEDS = 10
SCENARIO = "swarm-adsl"
TITLE = "BitTorrent swarms over ADSL: uTP vs TCP completion time"
SOURCE = 'Testa and Rossi, "The impact of uTP on BitTorrent completion time" (IEEE P2P 2011)'
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


def is_swarm(summary: dict[str, Any]) -> bool:
    return "swarm" in summary and "peers" in summary


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
    from slowstart.cli import fmt_bytes, table

    sw, peers = summary["swarm"], peers_frame(summary)
    if summary.get("mode") == "real":  # real libtorrent peers (real_swarm.py)
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


def save_run(result: Result, out_dir: str | os.PathLike[str]) -> list[Path]:
    """A swarm run's files: summary.json, queues.parquet, peers.parquet and swarm.png."""
    from slowstart.paths import output_folder

    out = output_folder(out_dir, "out_dir")
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / n for n in ("summary.json", "queues.parquet", "peers.parquet", "swarm.png")]
    paths[0].write_text(json.dumps(result.summary, indent=2) + "\n", encoding="utf-8")
    result.queues.to_parquet(paths[1], index=False)
    peers_frame(result.summary).to_parquet(paths[2], index=False)
    ms = packet_ms(result.config["swarm"]) if "swarm" in result.config else None
    plot_run(result.summary, result.queues, ms_per_packet=ms).savefig(paths[3], dpi=120)
    return paths


# --- figures ----------------------------------------------------------------------------------


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def packet_ms(config_swarm: dict[str, Any]) -> float:
    """Milliseconds one full-size packet takes on the uplink."""
    tcp = config_swarm["tcp"]
    return (tcp["mss"] + tcp["header_bytes"]) * 8 / config_swarm["access"]["up_bps"] * 1e3


def delay_target(cc: dict[str, Any]) -> float:
    """A delay-based controller's target in seconds: its `target` parameter, else the
    registry's default (ledbat and utp both have one)."""
    if "target" in cc["params"]:
        return float(cc["params"]["target"])
    from slowstart.scenario import core_algorithms

    for algo in core_algorithms() or []:
        if algo["name"] == cc["name"]:
            for param in algo["params"]:
                if param["name"] == "target":
                    return float(param["default"])
    return float("nan")


def _ms_axis(ax: Axes, ms_per_packet: float, packets: Sequence[int] = ()) -> None:
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


def _rank_panel(ax: Axes, discard: int, series: list[tuple[str, pd.DataFrame]]) -> None:
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
    fig = _figure(11, 4)
    left, right = fig.subplots(1, 2)
    series = [(t, done[done["transport"] == t]) for t in ("tcp", "utp")]
    _rank_panel(left, discard, [(t, d) for t, d in series if len(d)])
    _legend(left, fontsize="small")
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
        _ms_axis(right, ms_per_packet)
    fig.suptitle(
        f"{summary['scenario']}: {SPELLING.get(summary['swarm']['population'], '')} "
        f"{SPELLING.get(summary['swarm']['seeding'], '')}, seed {summary['seed']}"
    )
    return fig


# --- the reproduction -------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    population: str  # canonical: tcp, utp, mixed
    seeding: str  # canonical: never_leave, random_stay
    buffer: int  # uplink buffer, packets

    def overrides(self) -> list[str]:
        return [
            f'swarm.population="{SPELLING.get(self.population, self.population)}"',
            f'swarm.seeding="{SPELLING.get(self.seeding, self.seeding)}"',
            f'swarm.buffer="{self.buffer}pkt"',
        ]


@dataclass
class SwarmRun:
    setting: Setting
    seed: int
    summary: dict[str, Any]
    queue_counts: np.ndarray  # uplink occupancy histogram over the measurement window
    wall_s: float = 0.0

    @property
    def peers(self) -> pd.DataFrame:
        return peers_frame(self.summary)


@dataclass
class Study:
    """Every run of a reproduction, with the rules it was measured by."""

    runs: list[SwarmRun]
    discard: int
    keep: int
    buffer: int  # the main settings' uplink buffer, packets
    buffers: tuple[int, ...]
    ms_per_packet: float
    target_s: float = 0.1  # the uTP transport's delay target
    wall_s: float = 0.0
    jobs: int = 1
    notes: list[str] = field(default_factory=list)

    def of(self, population: str, seeding: str, buffer: int | None = None) -> list[SwarmRun]:
        s = Setting(population, seeding, self.buffer if buffer is None else buffer)
        return [r for r in self.runs if r.setting == s]

    def downloads(
        self, population: str, seeding: str, buffer: int | None = None, transport: str | None = None
    ) -> pd.DataFrame:
        """The kept downloads of every repetition of a setting (a `seed` column added)."""
        frames = []
        for r in self.of(population, seeding, buffer):
            k = kept(r.peers, self.discard, self.keep).assign(seed=r.seed)
            frames.append(k if transport is None else k[k["transport"] == transport])
        if not frames:
            return peers_frame({"peers": []}).assign(seed=pd.Series(dtype=int))
        return pd.concat(frames, ignore_index=True)

    def queue_hist(self, population: str, seeding: str, buffer: int | None = None) -> np.ndarray:
        return add_counts(r.queue_counts for r in self.of(population, seeding, buffer))


def _run_one(task: tuple[str, int]) -> dict[str, Any]:
    """A worker's run: the summary and the uplink histogram over the measurement window (not
    the whole series, which is large)."""
    from slowstart.api import run_config

    config_json, discard = task
    start = time.perf_counter()
    result = run_config(json.loads(config_json))
    peers = peers_frame(result.summary)
    hist = counts(uplink_samples(result.queues, window_start(peers, discard)))
    return {
        "summary": result.summary,
        "extra": {"queue_counts": hist.tolist(), "discard": discard},
        "wall_s": time.perf_counter() - start,
    }


def plan(
    seeds: Sequence[int], buffers: Sequence[int], main_buffer: int
) -> list[tuple[Setting, int]]:
    """Every (setting, seed) to run: 3 populations x 2 seedings at the main buffer, then the
    50-50 random-stay swarm at each other buffer. Random-stay runs first (they are longest),
    so the processes finish together."""
    main = [Setting(p, s, main_buffer) for s in reversed(SEEDINGS) for p in POPULATIONS]
    sweep = [Setting("mixed", "random_stay", b) for b in buffers if b != main_buffer]
    return [(s, seed) for s in [*main[:3], *sweep, *main[3:]] for seed in seeds]


def run_study(
    scenario: str | os.PathLike[str] | dict[str, Any] = SCENARIO,
    *,
    seeds: Sequence[int] = tuple(range(1, SEEDS + 1)),
    buffers: Sequence[int] = BUFFERS,
    set: Sequence[str] = (),  # noqa: A002 - as run() and sweep() take it
    leechers: int | None = None,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    store: str | os.PathLike[str] | None = None,
    rerun: bool = False,
) -> Study:
    """Run the reproduction's settings over `seeds` and return every run.

    `leechers` runs smaller swarms (a quick look): the run stops at that many completions and
    the first half are discarded, as the paper's 50 of 100. Every config is checked before
    anything runs. `progress(done, total)` is told (0, total) first, then after each run.
    With `store`, each run's summary (its peers) and uplink histogram is stored as it
    completes, and a run already stored is read instead of run (unless `rerun`).
    """
    from slowstart.paths import scenario_path
    from slowstart.scenario import load
    from slowstart.sweeps import run_configs
    from slowstart.units import ScenarioError

    if isinstance(scenario, str) and not scenario.endswith(".toml"):
        scenario = scenario_path(scenario)
    if not seeds:
        raise ScenarioError("--seeds: at least one seed is needed")
    extra = list(set)
    discard, keep = DISCARD, KEEP
    if leechers is not None:
        if leechers < 2:
            raise ScenarioError(f"--leechers {leechers}: expected at least 2")
        extra += [f"swarm.leechers={leechers}", f"swarm.stop_after={leechers}"]
        discard, keep = leechers // 2, leechers - leechers // 2
    base = load(scenario, set=extra)["swarm"]
    main_buffer = base["access"]["up_queue"].get("packets")
    if main_buffer is None:
        raise ScenarioError(
            "swarm.buffer: the reproduction varies the buffer in packets; give it in packets "
            '(such as "200pkt")'
        )
    tasks = plan(list(seeds), list(buffers), main_buffer)
    configs = []
    for setting, seed in tasks:
        try:
            config = load(scenario, set=[*extra, *setting.overrides()], seed=seed)
        except ValueError as e:
            raise ScenarioError(f"{setting} seed {seed}: {e}") from None
        # The measurement window is part of what is stored: a run is keyed by it too, and a
        # report reads it back (`stored_studies`).
        configs.append({**config, "reproduce": {"discard": discard, "keep": keep}})
    start = time.perf_counter()
    workers = min(jobs or os.cpu_count() or 1, len(configs))
    items = [
        (json.dumps({k: v for k, v in c.items() if k != "reproduce"}), discard) for c in configs
    ]
    points = [
        {"population": s.population, "seeding": s.seeding, "buffer": s.buffer, "seed": seed}
        for s, seed in tasks
    ]
    outs, _ran = run_configs(
        configs,
        points=points,
        source="reproduce swarm",
        store=store,
        rerun=rerun,
        jobs=workers,
        task=_run_one,
        items=items,
        chunksize=1,
        progress=progress,
    )
    runs = [
        SwarmRun(setting, seed, o["summary"], np.asarray(o["extra"]["queue_counts"]))
        for (setting, seed), o in zip(tasks, outs, strict=True)
    ]
    return Study(
        runs=runs,
        discard=discard,
        keep=keep,
        buffer=main_buffer,
        buffers=tuple(sorted({*buffers, main_buffer})) if buffers else (),
        ms_per_packet=packet_ms(base),
        target_s=delay_target(base["utp"]["cc"]),
        wall_s=time.perf_counter() - start,
        jobs=workers,
    )


def stored_studies(store: Store) -> list[Study]:
    """The studies a results store holds, made again from its `reproduce swarm` runs of this
    engine (nothing is run): runs whose configs differ only in population, seeding, uplink
    buffer and seed form one study. Its main buffer is the one the TCP and uTP swarms ran
    with; its buffer sweep, the 50-50 random-stay swarm's buffers when there are several."""
    from slowstart.store import canonical, engine_version

    rows = store.con.execute(
        "SELECT config, summary, extra, wall_s FROM runs "
        "WHERE source = 'reproduce swarm' AND version = ? ORDER BY stored_at, key",
        [engine_version()],
    ).fetchall()
    groups: dict[str, list[tuple[dict[str, Any], SwarmRun]]] = {}
    for config_text, summary, extra, wall_s in rows:
        config = json.loads(config_text)
        window = config.get("reproduce") or {}
        sw = config["swarm"]
        buffer = sw["access"]["up_queue"].get("packets")
        if "keep" not in window or buffer is None:
            continue  # stored before the window was recorded whole
        run = SwarmRun(
            Setting(sw["population"], sw["seeding"], buffer),
            int(config["seed"]),
            json.loads(summary),
            np.asarray(json.loads(extra)["queue_counts"]),
            wall_s,
        )
        access = {**sw["access"], "up_queue": None}
        common = {**config, "seed": None, "swarm": {**sw, "population": None, "seeding": None}}
        common["swarm"]["access"] = access
        groups.setdefault(canonical(common), []).append((config, run))
    studies = []
    for members in groups.values():
        config, _ = members[0]
        sw, runs = config["swarm"], [r for _, r in members]
        main = {r.setting.buffer for r in runs if r.setting.population != "mixed"}
        swept = {
            r.setting.buffer
            for r in runs
            if (r.setting.population, r.setting.seeding) == ("mixed", "random_stay")
        }
        buffer = max(main) if main else max(swept)
        order = {s: i for i, s in enumerate(POPULATIONS + SEEDINGS)}
        studies.append(
            Study(
                runs=sorted(
                    runs,
                    key=lambda r: (
                        order[r.setting.seeding],
                        order[r.setting.population],
                        r.setting.buffer,
                        r.seed,
                    ),
                ),
                discard=config["reproduce"]["discard"],
                keep=config["reproduce"]["keep"],
                buffer=buffer,
                buffers=tuple(sorted(swept | {buffer})) if len(swept) > 1 else (),
                ms_per_packet=packet_ms(sw),
                target_s=delay_target(sw["utp"]["cc"]),
                wall_s=sum(r.wall_s for r in runs),
                notes=[
                    f"{sw['leechers']} leechers, a {sw['file_bytes'] / 1e6:g} MB file, uplink "
                    f"buffer {buffer} packets"
                ],
            )
        )
    return studies


# --- findings ---------------------------------------------------------------------------------


@dataclass
class Finding:
    label: str
    published: str
    ours: str
    tolerance: str
    verdict: str  # "ok", "off" or "-" (not measured)

    def as_dict(self) -> dict[str, str]:
        return dict(self.__dict__)


def _median(frame: pd.DataFrame) -> float | None:
    return float(frame["completion_s"].median()) if len(frame) else None


def _run_medians(frame: pd.DataFrame) -> pd.Series:
    return frame.groupby("seed")["completion_s"].median()


def _median_text(frame: pd.DataFrame) -> str:
    """Pooled median and the range of the repetitions' medians."""
    m = _median(frame)
    if m is None:
        return "no downloads"
    per_run = _run_medians(frame)
    spread = f" (runs {per_run.min():.0f}-{per_run.max():.0f})" if len(per_run) > 1 else ""
    return f"{m:.1f} s{spread}"


def _within(value: float | None, target: float, rel: float) -> str:
    if value is None:
        return "-"
    return "ok" if abs(value - target) <= rel * target else "off"


def findings(study: Study) -> list[Finding]:
    """The paper's findings beside ours, each with its tolerance, as statistics over every
    repetition (pooled kept downloads, or pooled queue samples)."""
    out: list[Finding] = []
    nl = {p: study.downloads(p, "never_leave") for p in POPULATIONS}
    rs = {p: study.downloads(p, "random_stay") for p in POPULATIONS}
    ALIKE = 0.10  # noqa: N806 - the stated tolerance for "alike"

    for seeding, frames, published in (("never leave", nl, 30.0), ("random stay", rs, 155.0)):
        for p in ("tcp", "utp") if seeding == "random stay" else POPULATIONS:
            m = _median(frames[p])
            out.append(
                Finding(
                    f"{seeding}, {LABELS[p]} swarm: median completion time",
                    f"about {published:.0f} s",
                    _median_text(frames[p]),
                    "±25%",
                    _within(m, published, 0.25),
                )
            )
        pops = POPULATIONS if seeding == "never leave" else ("tcp", "utp")
        medians = [_median(frames[p]) for p in pops]
        if all(m is not None for m in medians):
            spread = (max(medians) - min(medians)) / (sum(medians) / len(medians))
            ours, verdict = f"medians differ by {spread:.1%}", "ok" if spread <= ALIKE else "off"
        else:
            ours, verdict = "not measured", "-"
        which = "populations" if seeding == "never leave" else "TCP and uTP swarms"
        out.append(
            Finding(
                f"{seeding}: {which} complete alike",
                "no difference",
                ours,
                f"medians within {ALIKE:.0%}",
                verdict,
            )
        )

    for seeding, frame, published, expect in (
        ("never leave", nl["mixed"], "no difference", "alike"),
        ("random stay", rs["mixed"], "uTP peers sooner", "sooner"),
    ):
        u, t = frame[frame["transport"] == "utp"], frame[frame["transport"] == "tcp"]
        mu, mt = _median(u), _median(t)
        if mu is None or mt is None:
            out.append(Finding(f"50-50 {seeding}: uTP vs TCP peers", published, "-", "", "-"))
            continue
        p = mann_whitney_less(u["completion_s"], t["completion_s"])
        both = pd.concat([_run_medians(u), _run_medians(t)], axis=1, keys=["u", "t"]).dropna()
        sooner = int((both["u"] < both["t"]).sum())
        ours = (
            f"uTP {mu:.1f} s, TCP {mt:.1f} s ({(mu - mt) / mt:+.1%}), p = {p:.2g}, "
            f"uTP sooner in {sooner}/{len(both)} runs"
        )
        if expect == "sooner":
            tol, verdict = "uTP median lower, p < 0.05", "ok" if mu < mt and p < 0.05 else "off"
        else:
            g = gap(mu, mt)
            tol = f"medians within {ALIKE:.0%}"
            verdict = "ok" if g is not None and g <= ALIKE else "off"
        out.append(Finding(f"50-50 {seeding}: uTP vs TCP peers", published, ours, tol, verdict))

    for p, published in PUBLISHED_QUEUE_MEANS.items():
        hist = study.queue_hist(p, "random_stay")
        m = mean_of(hist)
        tol = max(0.25 * published, 3.0)
        out.append(
            Finding(
                f"random stay, {LABELS[p]}: mean uplink queue",
                f"about {published:.0f} packets",
                "-" if m is None else f"{m:.1f} packets ({hist.sum():,} samples)",
                "±25% or ±3 packets",
                "-" if m is None else "ok" if abs(m - published) <= tol else "off",
            )
        )
    above = share_above(study.queue_hist("tcp", "random_stay"), 100)
    out.append(
        Finding(
            "random stay, TCP: uplink queue above 100 packets",
            f"about {PUBLISHED_TCP_ABOVE_100:.0%} of samples",
            "-" if above is None else f"{above:.0%} of samples",
            "15% to 25%",
            "-" if above is None else "ok" if 0.15 <= above <= 0.25 else "off",
        )
    )

    if study.buffers:
        # The paper: uTP and TCP peers alike "whenever the buffer size cannot sustain the
        # target"; its smallest B, 10 packets, holds 120 ms at 1 Mbps, more than the 25 ms
        # target. The largest B below the target, and the paper's smallest, are judged apart.
        target_ms = study.target_s * 1e3
        below = [b for b in study.buffers if b * study.ms_per_packet < target_ms]
        above = [b for b in study.buffers if b * study.ms_per_packet >= target_ms]
        for b in [*below[-1:], *above[:1]]:
            frame = study.downloads("mixed", "random_stay", b)
            u, t = frame[frame["transport"] == "utp"], frame[frame["transport"] == "tcp"]
            mu = float(u["completion_s"].mean()) if len(u) else None
            mt = float(t["completion_s"].mean()) if len(t) else None
            g = gap(mu, mt)
            where = "below" if b in below else "above"
            out.append(
                Finding(
                    f"50-50 random stay, B = {b} packets ({b * study.ms_per_packet:.0f} ms, "
                    f"{where} the {target_ms:.0f} ms target): uTP and TCP peers",
                    "indistinguishable" if b in below else "indistinguishable (at B = 10)",
                    "-" if g is None else f"means uTP {mu:.1f} s, TCP {mt:.1f} s ({g:.1%} apart)",
                    f"means within {ALIKE:.0%}",
                    "-" if g is None else "ok" if g <= ALIKE else "off",
                )
            )
        big = [b for b in study.buffers if b >= 50]
        means = {
            b: study.downloads("mixed", "random_stay", b, "utp")["completion_s"].mean() for b in big
        }
        means = {b: m for b, m in means.items() if not math.isnan(m)}
        if len(means) > 1:
            lo, hi = min(means.values()), max(means.values())
            out.append(
                Finding(
                    "50-50 random stay, B >= 50 packets: uTP peers' mean completion",
                    "roughly unaltered",
                    f"{lo:.1f} to {hi:.1f} s ({hi / lo - 1:.1%} apart)",
                    "within 15%",
                    "ok" if hi / lo - 1 <= 0.15 else "off",
                )
            )
        tcp_means = {
            b: study.downloads("mixed", "random_stay", b, "tcp")["completion_s"].mean()
            for b in (min(big, default=None), max(study.buffers))
            if b is not None
        }
        if len(tcp_means) == 2 and not any(math.isnan(m) for m in tcp_means.values()):
            (b1, m1), (b2, m2) = tcp_means.items()
            out.append(
                Finding(
                    f"50-50 random stay: TCP peers, B = {b1} to {b2} packets",
                    "slower as B grows",
                    f"mean {m1:.1f} s to {m2:.1f} s ({m2 / m1 - 1:+.1%})",
                    "larger at the larger B",
                    "ok" if m2 > m1 else "off",
                )
            )
    return out


FINDING_COLUMNS = ["finding", "published", "ours", "tolerance", "verdict"]
FINDING_NOTES = (
    "medians pool every kept download (in brackets: the range of the runs' own medians); "
    "p: one-sided Mann-Whitney U over the kept downloads, uTP peers against TCP peers"
)


def describe(study: Study) -> str:
    """What a study ran: runs, settings, seeds, the measurement window."""
    n_settings = len({r.setting for r in study.runs})
    seeds = sorted({r.seed for r in study.runs})
    return (
        f"{len(study.runs)} runs ({n_settings} settings x {len(seeds)} seeds); per run the "
        f"first {study.discard} completions discarded, the next {study.keep} kept"
    )


def tally(rows: list[Finding]) -> str:
    ok = sum(r.verdict == "ok" for r in rows)
    measured = sum(r.verdict in ("ok", "off") for r in rows)
    return f"{ok}/{measured} findings within their tolerance"


def format_findings(study: Study, rows: list[Finding]) -> str:
    import textwrap

    from slowstart.cli import table

    procs = f"{study.jobs} process{'' if study.jobs == 1 else 'es'}"
    head = (
        f"swarm: {TITLE}\n  source: {SOURCE}\n  {describe(study)}; {study.wall_s:.0f} s on {procs}"
    )
    body = table(
        FINDING_COLUMNS, [[r.label, r.published, r.ours, r.tolerance, r.verdict] for r in rows]
    )
    notes = textwrap.fill(FINDING_NOTES, 96, initial_indent="  ", subsequent_indent="  ")
    return f"{head}\n{body}\n{notes}\n  {tally(rows)}"


# --- the reproduction's figures -----------------------------------------------------------------


def _legend(ax: Axes, **kwargs: Any) -> None:
    """A legend, if anything was drawn with a label."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def _panels(n: int, width: float = 11, height: float = 4) -> tuple[Figure, list[Axes]]:
    fig = _figure(width, height)
    return fig, list(fig.subplots(1, n, squeeze=False)[0])


def plot_ranks(study: Study) -> Figure:
    """(a) Completion time against completion rank, one run (the first seed) per setting."""
    fig, axes = _panels(2)
    first = min(r.seed for r in study.runs)
    for ax, seeding in zip(axes, SEEDINGS, strict=True):
        series = []
        for p in POPULATIONS:
            runs = [r for r in study.of(p, seeding) if r.seed == first]
            if runs:
                peers = runs[0].peers
                done = peers[peers["completion_rank"].notna()].sort_values("completion_rank")
                series.append((p, done))
        _rank_panel(ax, study.discard, series)
        ax.set_title(f"{LABELS[seeding]} (seed {first})")
    _legend(axes[0], fontsize="small")
    fig.suptitle("Completion time by completion rank, one run per setting")
    return fig


def plot_cdfs(study: Study) -> Figure:
    """(b) Completion-time CDFs per population, never-leave and random-stay."""
    fig, axes = _panels(2)
    for ax, seeding in zip(axes, SEEDINGS, strict=True):
        for p in POPULATIONS:
            frame = study.downloads(p, seeding)
            if len(frame):
                x, y = ecdf(frame["completion_s"])
                ax.step(x, y, where="post", color=COLOURS[p], label=f"{LABELS[p]} ({len(x)})")
        ax.set_xlabel("completion time (s)")
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        ax.set_title(LABELS[seeding])
        _legend(ax, fontsize="small", title="population (downloads)")
    fig.suptitle("Completion time of the kept downloads, all repetitions")
    return fig


def plot_queues(study: Study) -> Figure:
    """(c) CCDF of uplink queue occupancy (10 Hz samples over the measurement window)."""
    fig, axes = _panels(2, height=4.4)
    for ax, seeding in zip(axes, SEEDINGS, strict=True):
        for p in POPULATIONS:
            hist = study.queue_hist(p, seeding)
            if hist.sum():
                x, y = ccdf(hist)
                ax.step(x, y, where="post", color=COLOURS[p], label=LABELS[p])
        ax.set_xlim(0, study.buffer)
        ax.set_ylim(0, 1)
        ax.set_xlabel("uplink queue (packets)")
        ax.set_ylabel("P(queue > x)")
        ax.grid(alpha=0.3)
        ax.set_title(LABELS[seeding])
        if seeding == "random_stay":
            # Published: each population's mean (dashed), TCP's share above 100 packets (x).
            for p, mean in PUBLISHED_QUEUE_MEANS.items():
                ax.axvline(mean, color=COLOURS[p], linestyle="--", linewidth=1)
            ax.plot([100], [PUBLISHED_TCP_ABOVE_100], "x", color=COLOURS["tcp"], markersize=9)
            ax.plot([], [], "k--", linewidth=1, label="published mean")
            ax.plot([], [], "kx", label="published: TCP > 100 pkt")
        _ms_axis(ax, study.ms_per_packet)
        _legend(ax, fontsize="small", title="population")
    fig.suptitle("Uplink queue occupancy, every uplink sampled at 10 Hz, CCDF")
    return fig


def plot_breakdown(study: Study) -> Figure:
    """(d) The 50-50 CDFs, uTP and TCP peers apart."""
    fig, axes = _panels(2)
    for ax, seeding in zip(axes, SEEDINGS, strict=True):
        frame = study.downloads("mixed", seeding)
        for t in ("utp", "tcp"):
            part = frame[frame["transport"] == t]
            if len(part):
                x, y = ecdf(part["completion_s"])
                ax.step(x, y, where="post", color=COLOURS[t], label=f"{LABELS[t]} ({len(x)})")
        ax.set_xlabel("completion time (s)")
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        ax.set_title(f"50-50, {LABELS[seeding]}")
        _legend(ax, fontsize="small", title="peers (downloads)")
    fig.suptitle("50-50 swarms: completion time of uTP and TCP peers")
    return fig


def plot_buffers(study: Study) -> Figure:
    """(e) Completion time (mean, 1st and 3rd quartile) against the uplink buffer, uTP and TCP
    peers of the 50-50 random-stay swarm apart."""
    fig = _figure(7, 4.4)
    ax = fig.subplots()
    for k, t in enumerate(("utp", "tcp")):
        xs, mean, q1, q3 = [], [], [], []
        for b in study.buffers:
            c = study.downloads("mixed", "random_stay", b, t)["completion_s"]
            q = quartiles(c)
            if q is None:
                continue
            xs.append(b * (1 + 0.03 * (k - 0.5)))  # side by side on the log axis
            mean.append(float(c.mean()))
            q1.append(q[0])
            q3.append(q[2])
        # The quartiles as bars of their own: a skewed sample's mean may lie outside them.
        colour = COLOURS[t]
        ax.vlines(xs, q1, q3, color=colour, lw=1.2)
        ax.plot(xs, q1, "_", xs, q3, "_", color=colour, markersize=8)
        ax.plot(xs, mean, marker="o", color=colour, label=f"{LABELS[t]} peers")
    ax.set_xscale("log")
    ax.set_yscale("log")  # a buffer below uTP's target costs several times the others
    low, high = ax.get_ylim()
    ticks = [v for v in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000) if low <= v <= high]
    ax.set_yticks(ticks, [str(v) for v in ticks])
    ax.set_xlabel("uplink buffer B (packets)")
    ax.set_ylabel("completion time (s): mean, 1st-3rd quartile")
    ax.set_xticks(list(study.buffers), [str(b) for b in study.buffers])
    ax.minorticks_off()
    ax.grid(alpha=0.3)
    _ms_axis(ax, study.ms_per_packet, study.buffers)
    _legend(ax, fontsize="small")
    ax.set_title("50-50 random stay: completion time against the uplink buffer")
    return fig


def write_outputs(study: Study, rows: list[Finding], out_dir: str | os.PathLike[str]) -> list[Path]:
    """swarm-*.png (the five figures), swarm-peers.parquet (every peer of every run, with its
    setting and seed) and swarm-findings.json."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = {
        "swarm-rank.png": plot_ranks,
        "swarm-cdf.png": plot_cdfs,
        "swarm-queues.png": plot_queues,
        "swarm-breakdown.png": plot_breakdown,
    }
    if study.buffers:
        figures["swarm-buffer.png"] = plot_buffers
    written = []
    for name, draw in figures.items():
        draw(study).savefig(out / name, dpi=120)
        written.append(out / name)
    frames = [
        r.peers.assign(
            population=r.setting.population,
            seeding=r.setting.seeding,
            buffer_packets=r.setting.buffer,
            seed=r.seed,
        )
        for r in study.runs
    ]
    written.append(out / "swarm-peers.parquet")
    pd.concat(frames, ignore_index=True).to_parquet(written[-1], index=False)
    written.append(out / "swarm-findings.json")
    written[-1].write_text(json.dumps([r.as_dict() for r in rows], indent=2) + "\n")
    return written


# --- `slowstart reproduce swarm` ----------------------------------------------------------------


def parse_buffers(text: str | None) -> tuple[int, ...]:
    """`--buffers 10,50,200` (packets) or `none`; default the paper's."""
    from slowstart.units import ScenarioError

    if text is None:
        return BUFFERS
    if text.strip() == "none":
        return ()
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise ScenarioError(
            f'--buffers {text}: expected packets such as "10,50,200", or "none"'
        ) from None
    if any(v < 1 for v in values) or len(set(values)) != len(values):
        raise ScenarioError(f"--buffers {text}: expected distinct positive packet counts")
    return values


def reproduce_swarm(args: Any) -> tuple[bool, dict[str, Any]]:
    """`slowstart reproduce swarm`: run, print the findings table (unless `--json`), write the
    figures into `--out`; returns (every finding within tolerance, the JSON report)."""
    from slowstart.sweeps import check_workers
    from slowstart.units import ScenarioError

    n_seeds = SEEDS if args.seeds is None else args.seeds
    if n_seeds < 1:
        raise ScenarioError(f"--seeds {n_seeds}: expected at least 1")
    check_workers(args.jobs, None)
    seeds = list(range(1, n_seeds + 1))
    jobs = args.jobs or os.cpu_count() or 1
    from slowstart.progress import bar

    with bar("swarm", unit="runs", quiet=getattr(args, "quiet", False)) as update:

        def progress(done: int, total: int) -> None:
            if done == 0:
                n = min(jobs, total)
                print(f"swarm: {total} runs on {n} process{'es' if n > 1 else ''}", file=sys.stderr)
            update(done, total)

        study = run_study(
            SCENARIO,
            seeds=seeds,
            buffers=parse_buffers(args.buffers),
            set=args.set or [],
            leechers=args.leechers,
            jobs=jobs,
            progress=progress,
            store=getattr(args, "store", None),
            rerun=getattr(args, "rerun", False),
        )
    rows = findings(study)
    written = write_outputs(study, rows, args.out) if args.out else []
    if not args.json:
        print(format_findings(study, rows))
        for path in written:
            print(f"  wrote: {path}")
    report = {
        "title": TITLE,
        "source": SOURCE,
        "runs": len(study.runs),
        "seeds": seeds,
        "discard": study.discard,
        "keep": study.keep,
        "wall_s": study.wall_s,
        "rows": [r.as_dict() for r in rows],
        "plots": [str(p) for p in written],
    }
    return all(r.verdict != "off" for r in rows), report
