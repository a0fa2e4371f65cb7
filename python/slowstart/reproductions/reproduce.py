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
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
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
from slowstart.reproductions.links_study import ALGORITHMS as LINK_ALGORITHMS
from slowstart.reproductions.links_study import LINKS, links_figures, missing_traces
from slowstart.reproductions.net100_cross import run_blast, run_parallel
from slowstart.running.api import Result, run_config
from slowstart.running.measures import (
    acked_until_resume_bdp,
    cwnd_after_recovery_bdp,
    facts_table,
    goodput_mbps,
    settled_queue_delay,
    share_once_avoiding,
)
from slowstart.running.plan import first_object
from slowstart.running.store import Record, Store, run_key, traces_of
from slowstart.running.sweeps import open_store

NO_DELACK, DELACK = "flow.0.delayed_ack=false", "flow.0.delayed_ack=true"
HSTCP31 = ('flow.0.cc="hstcp:low_window=31"',)
HSTCP38 = ('flow.0.cc="hstcp:low_window=38"',)
TUNED_AIMD = ('flow.0.cc="aimd:a=15,b=0.3"',)
HYSTART = 'flow.0.cc="cubic:slow_start=hystart"'
# Linux 2.4 advertises 3/4 of the receive buffer (tcp_adv_win_scale = 2): a buffer sized for
# 2000 segments opens a window of 1500.
LINUX24_WINDOW = "flow.0.max_window=1500seg"
# picoquic's 3 Mbps return path (satellite_basic_test): picoquic asks for an ACK every 10
# packets when the RTT is above 100 ms and the rate above 16 Mbps (picoquic_compute_ack_gap);
# every 10th full segment is about 1 Mbps of ACKs at 250 Mbps.
THIN = ('path.reverse_rate="3Mbps"', "flow.0.ack_every=10")


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


EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in [
        Experiment(
            name="floyd",
            title="Floyd's early loss: seconds from an early slow-start loss to the window cap",
            source="net100, Floyd's TCP slow-start and AIMD mods (ns-2, 500 Mbps, 80 ms, 3500 seg)",
            scenario="lfn-early-loss",
            metric="time_to_window_cap_s",
            unit="s",
            tolerance=0.10,
            common=("flow.0.abc=false",),
            variants=(
                Variant("standard TCP", ("flow.0.delayed_ack=false",), 284),
                Variant("standard TCP (del ACK)", ("flow.0.delayed_ack=true",), 577),
                Variant(
                    "standard TCP, jumbo frames",
                    ("flow.0.delayed_ack=false", "flow.0.mss=8960"),
                    47,
                ),
                Variant(
                    "standard TCP (del ACK), jumbo frames",
                    ("flow.0.delayed_ack=true", "flow.0.mss=8960"),
                    91,
                ),
            ),
        ),
        Experiment(
            name="bittorrent",
            title="A new seeding uTP connection: when the seed leaves slow start",
            source="libtorrent blog, slow start (BitTorrent request slow start, libtorrent 1.0.6)",
            scenario="bittorrent-request-slowstart",
            metric="slow_start_exit_s",
            unit="s",
            tolerance=0.25,
            common=(),
            variants=(
                Variant(
                    "request queue by rate only (before 1.0.6)",
                    ("app.0.app_slow_start=false",),
                    3.2,
                ),
                Variant(
                    "request slow start (1.0.6)", ("app.0.app_slow_start=true",), 1.0, bound="<"
                ),
            ),
            figures=request_ramp_figures,
        ),
        Experiment(
            name="web-initcwnd",
            title="A 17 kB page on a new connection, 10 Mbps, 50 ms RTT",
            source="Habets 2011, Optimizing TCP slow start (initcwnd/initrwnd)",
            scenario="web-initcwnd",
            metric="apps.0.objects.0 (first object of the web flow)",
            unit="",
            tolerance=0.25,
            common=(),
            variants=(
                Variant(
                    "defaults of the time (initcwnd 3, initrwnd 4): first to last byte",
                    (),
                    0.170,
                    metric="apps.0.objects.0.first_to_last_s",
                    unit=" s",
                ),
                Variant(
                    "defaults of the time: stalls (published 4-6)",
                    (),
                    5,
                    metric="apps.0.objects.0.stalls",
                ),
                Variant(
                    "initcwnd 20, initrwnd 20: round trips in all",
                    ("flow.0.initcwnd=20", "flow.0.initrwnd=20"),
                    2,
                    metric=lambda s: (first_object(s) or {}).get("round_trips"),
                ),
                Variant(
                    "initcwnd 20, initrwnd 20: first to last byte (single-digit ms)",
                    ("flow.0.initcwnd=20", "flow.0.initrwnd=20"),
                    0.0099,
                    metric="apps.0.objects.0.first_to_last_s",
                    bound="<",
                    unit=" s",
                ),
            ),
            figures=window_grid_figures,
        ),
        Experiment(
            name="floyd-aimd",
            title="Floyd's early loss: Floyd AIMD (HighSpeed) and tuned AIMD, back to the cap",
            source="net100, Floyd's TCP slow-start and AIMD mods (ns-2, 500 Mbps, 80 ms, 3500 seg)",
            scenario="lfn-early-loss",
            metric="time_to_window_cap_s",
            unit="s",
            tolerance=0.15,
            common=("flow.0.abc=false", "duration=100s"),
            variants=(
                Variant("Floyd AIMD (ns-2 low_window 31)", (*HSTCP31, NO_DELACK), 35),
                Variant("Floyd AIMD (ns-2 low_window 31, del ACK)", (*HSTCP31, DELACK), 71),
                Variant("Floyd AIMD (RFC 3649 low_window 38)", (*HSTCP38, NO_DELACK), 35),
                Variant("Floyd AIMD (RFC 3649 low_window 38, del ACK)", (*HSTCP38, DELACK), 71),
                Variant("tuned AIMD (0.3, 15)", (*TUNED_AIMD, NO_DELACK), 19),
                Variant("tuned AIMD (0.3, 15) (del ACK)", (*TUNED_AIMD, DELACK), 38),
            ),
        ),
        Experiment(
            name="lss",
            title="Limited Slow-Start against a slow-start loss burst (10 s, 2000-seg window)",
            source="net100, Floyd's slow-start and AIMD mods (PSC to LBL, 75 ms, no delayed ACK)",
            scenario="net100-lss",
            metric="goodput over the 10 s run",
            unit=" Mbps",
            tolerance=0.15,
            common=(),
            variants=(
                Variant("standard slow start (reno)", ('flow.0.cc="reno"',), 98, goodput_mbps),
                Variant("LSS max_ssthresh 100 (lss)", ('flow.0.cc="lss"',), 192, goodput_mbps),
                Variant(
                    "LSS max_ssthresh 200 (lss)",
                    ('flow.0.cc="lss:max_ssthresh=200"',),
                    204,
                    goodput_mbps,
                ),
                Variant(
                    "LSS 100, 1500-seg window (Linux 2.4 keeps 1/4 of the buffer)",
                    ('flow.0.cc="lss"', LINUX24_WINDOW),
                    192,
                    goodput_mbps,
                ),
                Variant(
                    "LSS 200, 1500-seg window (Linux 2.4 keeps 1/4 of the buffer)",
                    ('flow.0.cc="lss:max_ssthresh=200"', LINUX24_WINDOW),
                    204,
                    goodput_mbps,
                ),
            ),
        ),
        Experiment(
            name="atou",
            title="Limited Slow-Start stretches slow start: 87 ms, 1000-segment window, over UDP",
            source="net100, Floyd's slow-start mods in atou, their TCP over UDP (ORNL-NERSC)",
            scenario="net100-atou",
            metric="seconds to the 1000-segment window; stretch = LSS less standard",
            unit=" s",
            tolerance=0.25,
            common=(),
            variants=(
                Variant("standard slow start (reno)", ('flow.0.cc="reno"',), None),
                Variant("LSS max_ssthresh 100 (lss)", ('flow.0.cc="lss:max_ssthresh=100"',), None),
            ),
            runner=lambda exp, out, progress: run_atou(exp, out, progress),
        ),
        Experiment(
            name="blast",
            title="Recovery after a 0.5 s UDP blast: standard, HighSpeed and Scalable TCP alone",
            source="net100, Floyd's slow-start and AIMD mods (Kelly's Scalable TCP, "
            "California-CERN)",
            scenario="net100-blast",
            metric="seconds from the blast (3 s) until cwnd is back at the 1000-segment window",
            unit=" s",
            tolerance=0.0,
            common=(),
            variants=(
                Variant("standard TCP (reno)", ('flow.0.cc="reno"',), None),
                Variant("Floyd's HighSpeed TCP (hstcp)", ('flow.0.cc="hstcp"',), None),
                Variant("Kelly's Scalable TCP (scalable)", ('flow.0.cc="scalable"',), None),
            ),
            runner=lambda exp, out, progress: run_blast(exp, out, progress),
        ),
        Experiment(
            name="parallel",
            title="4 parallel Reno streams vs one AIMD (0.125, 4) stream, without and with LSS",
            source="net100, Floyd's slow-start and AIMD mods (ORNL-CERN, WAD-tuned AIMD)",
            scenario="net100-parallel",
            metric="goodput over the 10 s run (all streams added)",
            unit=" Mbps",
            tolerance=0.25,
            common=(),
            variants=(
                Variant("4 parallel standard streams (reno), aggregate", (), 82),
                Variant("one stream, AIMD (0.125, 4)", ('flow.0.cc="aimd:a=4,b=0.125"',), 38),
                Variant(
                    "one stream, AIMD (0.125, 4), Limited Slow-Start",
                    ('flow.0.cc="aimd:a=4,b=0.125,slow_start=lss"',),
                    29,
                ),
            ),
            runner=lambda exp, out, progress: run_parallel(exp, out, progress),
        ),
        Experiment(
            name="vegas-gamma",
            title="Vegas leaving slow start at gamma vs handing over to Limited Slow-Start",
            source="net100, Floyd's slow-start and AIMD mods (atou Vegas, PSC-ORNL, OC-12, 77 ms)",
            scenario="net100-vegas-gamma",
            metric="goodput over the 10 s run",
            unit=" Mbps",
            tolerance=0.25,
            common=(),
            variants=(
                Variant(
                    "Vegas (alpha 1, beta 3, gamma 1)",
                    ('flow.0.cc="vegas:alpha=1,beta=3,gamma=1,round_rtt=mean"',),
                    36,
                    goodput_mbps,
                ),
                Variant(
                    "Vegas, LSS at gamma (vegas-lss)",
                    ('flow.0.cc="vegas-lss:alpha=1,beta=3,gamma=1,round_rtt=mean"',),
                    232,
                    goodput_mbps,
                ),
            ),
        ),
        Experiment(
            name="satellite",
            title="100 MB over 250 Mbps, 600 ms: completion time by slow-start rule",
            source="picoquic blog, Faster slow start for satellite links? (Huitema 2020)",
            # picoquic's own test link: no queue limit, flow control not binding, paced.
            scenario="satellite-picoquic-test",
            metric="completion_s",
            unit="s",
            tolerance=0.25,
            # picoquic paces everything it sends (QUIC), so every variant is paced here.
            common=(
                "flow.0.pacing=true",
                "trace.flow_interval=10ms",
                "trace.queue_interval=10ms",
            ),
            variants=(
                Variant("standard slow start (reno)", ('flow.0.cc="reno"',), None),
                Variant("cubic, HyStart", (HYSTART,), 8.9),
                Variant("cubic, HyStart++", ('flow.0.cc="cubic:slow_start=hystart++"',), None),
                Variant("cubic, SEARCH", ('flow.0.cc="cubic:slow_start=search"',), None),
                Variant(
                    "hystart-pb (peak-bandwidth start)",
                    ('flow.0.cc="hystart-pb"',),
                    5.2,
                    requires=("hystart-pb",),
                ),
                Variant(
                    "hystart-pb, initial window not scaled by RTT",
                    ('flow.0.cc="hystart-pb:long_rtt_initcwnd=false"',),
                    None,
                    requires=("hystart-pb",),
                ),
                Variant("bbr", ('flow.0.cc="bbr"',), None, requires=("bbr",)),
                Variant("reno, 3 Mbps return, ACK every 10", ('flow.0.cc="reno"', *THIN), None),
                Variant("cubic, HyStart, 3 Mbps return, ACK every 10", (HYSTART, *THIN), 8.9),
                Variant(
                    "hystart-pb, 3 Mbps return, ACK every 10",
                    ('flow.0.cc="hystart-pb"', *THIN),
                    5.2,
                    requires=("hystart-pb",),
                ),
                Variant(
                    "bbr, 3 Mbps return, ACK every 10",
                    ('flow.0.cc="bbr"', *THIN),
                    None,
                    requires=("bbr",),
                ),
                # A router with a 1-BDP buffer and a Linux-like receiver (scenarios/satellite.toml).
                *(
                    Variant(
                        f"{label}, 1-BDP buffer, Linux receive window",
                        (cc,),
                        None,
                        scenario="satellite",
                        requires=requires,
                    )
                    for label, cc, requires in (
                        ("cubic, HyStart", HYSTART, ()),
                        ("cubic, HyStart++", 'flow.0.cc="cubic:slow_start=hystart++"', ()),
                        ("cubic, SEARCH", 'flow.0.cc="cubic:slow_start=search"', ()),
                        ("hystart-pb", 'flow.0.cc="hystart-pb"', ("hystart-pb",)),
                        ("bbr", 'flow.0.cc="bbr"', ("bbr",)),
                    )
                ),
            ),
            figures=lambda exp, results, out: facts_figures(exp, results, out),
        ),
        Experiment(
            name="careful-resume",
            title="100 MB over 250/3 Mbps, 600 ms: Careful Resume from a saved BDP vs unseeded",
            source="picoquic satellite_cubic_test and satellite_cubic_seeded_test (pass "
            "thresholds); RFC 9959",
            scenario="careful-resume",
            metric="completion_s",
            unit="s",
            tolerance=0.0,
            common=(),
            variants=(
                Variant(
                    "unseeded picoquic CUBIC start (hystart-pb)",
                    ('flow.0.cc="hystart-pb"',),
                    6.5,
                    bound="<",
                ),
                Variant(
                    "careful resume, jump to the whole saved BDP (picoquic's seed)",
                    ('flow.0.cc.jump="full"',),
                    5.0,
                    bound="<",
                ),
                Variant("careful resume, jump to half the saved BDP (RFC 9959)", (), None),
                Variant("unseeded reno", ('flow.0.cc="reno"',), None),
                Variant(
                    "careful resume around reno, half",
                    ('flow.0.cc="careful-resume:saved_cwnd=12842,saved_rtt_ms=600"',),
                    None,
                ),
            ),
        ),
        Experiment(
            name="rapid-start",
            title="Rapid Start's first loss: acknowledged before resuming, cwnd after recovery",
            source="draft-kazuho-ccwg-rapid-start-02, Appendix A model (W = 3 full BDP, 2/3 lost)",
            scenario="rapid-start",
            metric="full BDPs (path BDP + queue)",
            unit=" BDP",
            tolerance=0.25,
            common=(),
            variants=tuple(
                Variant(f"{label}: {what}", (cc,), published, measure=measure)
                for label, cc, beta in (
                    ("Reno base", 'flow.0.cc="rapid-start"', 0.5),
                    ("CUBIC base", 'flow.0.cc="rapid-start:base=cubic"', 0.7),
                    (
                        "Reno base, TCP recovery period",
                        'flow.0.cc="rapid-start:recovery_period=tcp"',
                        0.5,
                    ),
                )
                for what, published, measure in (
                    ("acknowledged before sending resumes", 1 - beta, acked_until_resume_bdp),
                    ("cwnd after the recovery", beta, cwnd_after_recovery_bdp),
                )
            )
            + (
                Variant(
                    "standard slow start (reno): cwnd after the recovery",
                    ('flow.0.cc="reno"',),
                    None,
                    measure=cwnd_after_recovery_bdp,
                ),
            ),
        ),
        Experiment(
            name="links",
            title="Every slow start behind drop-tail (1 and 10 BDP), CoDel and recorded LTE links",
            source="issue 13 (no publication); LTE traces: Winstein et al., NSDI 2013",
            scenario="slow-start-links",
            metric="time_to_full_bw_s",
            unit="s",
            tolerance=0.0,
            common=(),
            variants=tuple(
                Variant(
                    f"{algo} | {link}",
                    (f'flow.0.cc="{cc}"', *overrides),
                    None,
                    unavailable=(lambda files=files: missing_traces(files)) if files else None,
                )
                for algo, cc in LINK_ALGORITHMS
                for link, overrides, files in LINKS
            ),
            figures=links_figures,
        ),
        Experiment(
            name="ledbat",
            title="LEDBAT alone holds the queue at its 100 ms target; beside Reno it yields",
            source="RFC 6817 (TARGET 100 ms; yields to TCP); uTP: BEP 29, libtorrent",
            scenario="ledbat-alone",
            metric="queuing delay settled (s) / LEDBAT's share beside Reno",
            unit="",
            tolerance=0.20,
            common=(),
            variants=(
                *(
                    Variant(
                        f"{cc} alone: bottleneck queuing delay after 30 s",
                        (f'flow.0.cc="{cc}"',),
                        0.100,
                        unit=" s",
                        measure=settled_queue_delay(LEDBAT_SETTLED_S),
                    )
                    for cc in ("ledbat", "utp")
                ),
                *(
                    Variant(
                        f"{cc} vs reno: {cc}'s share, 30 s after Reno's slow start",
                        (f'flow.0.cc="{cc}"',),
                        0.20,
                        bound="<",
                        measure=share_once_avoiding(0, 1, LEDBAT_HOLD_S),
                        scenario="ledbat-vs-reno",
                    )
                    for cc in ("ledbat", "utp")
                ),
            ),
            figures=ledbat_figures,
        ),
        Experiment(
            name="dctcp",
            title="DCTCP across two bottlenecks: 40 senders, 10 and 1 Gbps, rates from 4 s to 5 s",
            source="Alizadeh et al., DCTCP, SIGCOMM 2010, Fig. 17, in ns-3's "
            "examples/tcp/dctcp-example.cc setup (its comment gives ns-3's own results)",
            scenario="dctcp-fig17",
            metric="mean rate per sender of a group, Jain's index, mean queueing delay",
            unit=" Mbps",
            tolerance=0.10,
            common=(),
            variants=tuple(
                Variant(label, (), published, bound=bound, unit=unit)
                for label, published, bound, unit in (
                    ("step at K (paper): S1 senders, mean rate", 46, "=", None),
                    ("step at K (paper): S3 senders, mean rate", 54, "=", None),
                    ("step at K (paper): S2 senders, mean rate", 475, "=", None),
                    ("step at K (paper): Jain's index, lowest group", 0.99, ">", ""),
                    ("step at K: T2 -> R1 queueing delay", None, "=", " ms"),
                    ("step at K: T1 -> T2 queueing delay", None, "=", " ms"),
                    ("ns-3's RED: S1 senders, mean rate", 23, "=", None),
                    ("ns-3's RED: S3 senders, mean rate", 74, "=", None),
                    ("ns-3's RED: S2 senders, mean rate", 471, "=", None),
                    ("ns-3's RED: Jain's index, lowest group", 0.99, ">", ""),
                    ("ns-3's RED: T2 -> R1 queueing delay", 1.0, "=", " ms"),
                    ("ns-3's RED: T1 -> T2 queueing delay", 0.2, "=", " ms"),
                )
            ),
            runner=lambda exp, out, progress: run_fig17(exp, out, progress),
        ),
        Experiment(
            name="prague",
            title="Four 1 MB responses over 10 Mbps, 20 ms: Prague with a CE step at 5 ms, "
            "Reno on drop-tail",
            source="picoquic PR #1378 (picoquictest/l4s_test.c: l4s_prague, l4s_reno)",
            scenario="prague-l4s",
            metric="losses, the RTT's rise above its minimum, time to the last byte",
            unit="",
            tolerance=0.25,
            common=(),
            variants=tuple(
                Variant(f"{label}: {what}", overrides, published, metric, unit=unit, measure=m)
                for label, overrides, published_by_what in (
                    ("prague, CE step at 5 ms", (), (5, 6, 3.7)),
                    (
                        "reno, drop-tail",
                        ('flow.0.cc="reno"', 'path.queue="droptail"'),
                        (35, 25, 4.0),
                    ),
                )
                for (what, metric, unit, m), published in zip(
                    (
                        ("losses (retransmissions)", "flows.0.retransmits", "", None),
                        ("RTT peak above the minimum", None, " ms", rtt_rise_ms),
                        ("the four responses complete", "flows.0.completion_s", " s", None),
                    ),
                    published_by_what,
                    strict=True,
                )
            )
            + tuple(
                Variant(
                    f"{label}: RTT peak above the minimum, responses 2-4",
                    overrides,
                    None,
                    unit=" ms",
                    measure=rtt_rise_after_first_response_ms,
                )
                for label, overrides in (
                    ("prague, CE step at 5 ms", ()),
                    ("reno, drop-tail", ('flow.0.cc="reno"', 'path.queue="droptail"')),
                )
            ),
            figures=l4s_figures,
        ),
    ]
}


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
