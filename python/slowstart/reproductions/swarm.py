"""BitTorrent swarms (Testa and Rossi, "The impact of uTP on BitTorrent completion time"):
running the study and `slowstart reproduce swarm`. The study as data is swarm_study.py, its
findings swarm_findings.py, its figures swarm_figures.py.

One run (`slowstart run swarm-adsl`) gives `summary["peers"]`, one row per peer, and the
uplink queue series in `Result.queues`. The reproduction runs every setting of the paper
(populations tcp, utp and 50-50; seeding never-leave and random-stay) over several seeds,
keeps the downloads after the first `discard` completions, and the 50-50 random-stay swarm
over a range of uplink buffers; runs go over processes with the sweep's runner.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.loading.scenario import load
from slowstart.paths import scenario_path
from slowstart.progress import bar
from slowstart.reproductions.swarm_figures import write_outputs
from slowstart.reproductions.swarm_findings import findings, format_findings
from slowstart.reproductions.swarm_study import (
    BUFFERS,
    SCENARIO,
    SEEDS,
    SOURCE,
    TITLE,
    Setting,
    Study,
    SwarmRun,
)
from slowstart.running.api import run_config
from slowstart.running.batches import check_workers, run_configs
from slowstart.running.records import canonical, engine_version
from slowstart.running.swarm_results import (
    DISCARD,
    KEEP,
    POPULATIONS,
    SEEDINGS,
    counts,
    delay_target,
    packet_ms,
    peers_frame,
    uplink_samples,
    window_start,
)
from slowstart.units import ScenarioError

if TYPE_CHECKING:
    from slowstart.running.store import Store

mpl_figure = lazy.module("matplotlib.figure")
np = lazy.module("numpy")
pd = lazy.module("pandas")


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
