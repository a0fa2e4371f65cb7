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
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.loading.scenario import load
from slowstart.paths import scenario_path
from slowstart.progress import bar
from slowstart.running.api import run_config
from slowstart.running.store import canonical, engine_version
from slowstart.running.swarm_results import (
    COLOURS,
    DISCARD,
    KEEP,
    LABELS,
    POPULATIONS,
    SEEDINGS,
    SPELLING,
    add_counts,
    ccdf,
    counts,
    delay_target,
    ecdf,
    gap,
    kept,
    legend,
    mann_whitney_less,
    mean_of,
    ms_axis,
    new_figure,
    packet_ms,
    peers_frame,
    quartiles,
    rank_panel,
    share_above,
    uplink_samples,
    window_start,
)
from slowstart.running.sweeps import check_workers, run_configs
from slowstart.tables import table
from slowstart.units import ScenarioError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from slowstart.running.store import Store

mpl_figure = lazy.module("matplotlib.figure")
np = lazy.module("numpy")
pd = lazy.module("pandas")


# The paper's random-stay uplink queues (Fig. 2): mean packets per population, and the share of
# TCP samples above 100 packets.
PUBLISHED_QUEUE_MEANS = {"tcp": 52.0, "mixed": 34.0, "utp": 6.0}
PUBLISHED_TCP_ABOVE_100 = 0.20
# Uplink buffers of the paper's Fig. 3(b), packets, and 2 packets (24 ms at 1 Mbps): the
# paper's smallest, 10 packets, holds 120 ms, more than uTP's 25 ms target.
BUFFERS = (2, 10, 25, 50, 75, 100, 150, 200)
SEEDS = 10
SCENARIO = "swarm-adsl"
TITLE = "BitTorrent swarms over ADSL: uTP vs TCP completion time"
SOURCE = 'Testa and Rossi, "The impact of uTP on BitTorrent completion time" (IEEE P2P 2011)'


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


def _panels(n: int, width: float = 11, height: float = 4) -> tuple[Figure, list[Axes]]:
    fig = new_figure(width, height)
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
        rank_panel(ax, study.discard, series)
        ax.set_title(f"{LABELS[seeding]} (seed {first})")
    legend(axes[0], fontsize="small")
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
        legend(ax, fontsize="small", title="population (downloads)")
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
        ms_axis(ax, study.ms_per_packet)
        legend(ax, fontsize="small", title="population")
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
        legend(ax, fontsize="small", title="peers (downloads)")
    fig.suptitle("50-50 swarms: completion time of uTP and TCP peers")
    return fig


def plot_buffers(study: Study) -> Figure:
    """(e) Completion time (mean, 1st and 3rd quartile) against the uplink buffer, uTP and TCP
    peers of the 50-50 random-stay swarm apart."""
    fig = new_figure(7, 4.4)
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
    ms_axis(ax, study.ms_per_packet, study.buffers)
    legend(ax, fontsize="small")
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
    n_seeds = SEEDS if args.seeds is None else args.seeds
    if n_seeds < 1:
        raise ScenarioError(f"--seeds {n_seeds}: expected at least 1")
    check_workers(args.jobs, None)
    seeds = list(range(1, n_seeds + 1))
    jobs = args.jobs or os.cpu_count() or 1

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
