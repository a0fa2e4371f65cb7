"""BitTorrent swarms (issue 10): the [swarm] loader, the CLI on swarms, the statistics of
`slowstart reproduce swarm` on hand-computable inputs, and small swarms end to end."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, cli
from slowstart import _core
from slowstart.cli import main
from slowstart.loading.scenario import ScenarioError, load
from slowstart.running import memory

SWARM_ADSL = str(ROOT / "scenarios" / "swarm-adsl.toml")


def bare(**swarm) -> dict:
    """A scenario of defaults but for `swarm`'s keys."""
    return {"name": "bare", "duration": "100s", "swarm": swarm}


# --- loader ---------------------------------------------------------------------------------


def test_defaults_are_the_papers_and_the_scenario_states_them():
    s = load(bare())["swarm"]
    assert (s["seeds"], s["leechers"], s["arrival_mean_ns"]) == (1, 100, 10_000_000_000)
    assert (s["file_bytes"], s["piece_bytes"], s["block_bytes"]) == (25_000_000, 262_144, 16_384)
    assert (s["population"], s["seeding"], s["stay_factor"]) == ("mixed", "random_stay", 0.5)
    assert s["stop_after_completions"] == 100 and s["queue_sample_ns"] == 100_000_000
    assert s["access"] == {
        "up_bps": 1_000_000,
        "down_bps": 8_000_000,
        "up_queue": {"packets": 200},
        "down_queue": {"packets": 200},
        "delay_min_ns": 1_000_000,
        "delay_max_ns": 25_000_000,
    }
    bt = s["bittorrent"]
    assert (bt["tracker_peers"], bt["min_peers"], bt["max_initiate"]) == (25, 10, 20)
    assert (bt["unchoke_slots"], bt["rechoke_ns"], bt["optimistic_ns"]) == (4, 10**10, 3 * 10**10)
    assert (bt["pipeline"], bt["new_peer_weight"], bt["reannounce_ns"]) == (5, 3, 300 * 10**9)
    assert not (bt["end_game"] or bt["anti_snubbing"] or bt["super_seeding"])
    tcp, utp = s["tcp"], s["utp"]
    assert tcp["cc"] == {"name": "reno", "params": {}}
    assert utp["cc"] == {"name": "ledbat", "params": {"target": 0.025}}
    for t in (tcp, utp):
        assert (t["src"], t["dst"], t["size_bytes"], t["app"]) == (
            "uploader",
            "downloader",
            None,
            {"kind": "bulk"},
        )
        assert (t["mss"], t["header_bytes"], t["initcwnd"]) == (1460, 40, 2)
        assert t["max_window_bytes"] == 20 * 1460
        assert not (t["handshake"] or t["delayed_ack"] or t["abc"])
        assert (t["loss_detection"], t["recovery"]) == ("dupthresh", "rfc6675")
    # The scenario file spells out the same values the defaults hold.
    config = load(SWARM_ADSL)
    assert config["swarm"] == s
    assert (config["nodes"], config["links"], config["flows"]) == ([], [], [])


def test_names_buffers_delays_and_stop():
    s = load(
        bare(
            population="mixed",
            seeding="never_leave",
            buffer="100ms",
            down_buffer="64kB",
            delay="10ms",
            stop_after="none",
            stay_factor=1,
        )
    )["swarm"]
    assert (s["population"], s["seeding"], s["stay_factor"]) == ("mixed", "never_leave", 1.0)
    # 100 ms at the 1 Mbps uplink is 12 500 bytes.
    assert s["access"]["up_queue"] == {"bytes": 12_500}
    assert s["access"]["down_queue"] == {"bytes": 64_000}
    assert (s["access"]["delay_min_ns"], s["access"]["delay_max_ns"]) == (10**7, 10**7)
    assert s["stop_after_completions"] is None
    assert load(bare(population="50-50", seeding="random-stay"))["swarm"]["population"] == "mixed"


def test_overrides_reach_every_swarm_table():
    config = load(
        SWARM_ADSL,
        set=[
            "swarm.population=utp",
            "swarm.buffer=50pkt",
            "swarm.bittorrent.pipeline=10",
            "swarm.tcp.initcwnd=10",
            'swarm.delay=["5ms", "5ms"]',
        ],
        seed=7,
    )
    s = config["swarm"]
    assert config["seed"] == 7
    assert s["population"] == "utp" and s["access"]["up_queue"] == {"packets": 50}
    assert s["bittorrent"]["pipeline"] == 10 and s["tcp"]["initcwnd"] == 10
    assert s["utp"]["initcwnd"] == 2 and s["access"]["delay_min_ns"] == 5_000_000


def test_overrides_create_swarm_tables_and_keep_the_transport_algorithm():
    # Without [swarm.utp] in the scenario, a parameter override starts from the default LEDBAT.
    s = load(bare(), set=["swarm.utp.cc.gain=0.5", "swarm.bittorrent.end_game=true"])["swarm"]
    assert s["utp"]["cc"] == {"name": "ledbat", "params": {"target": 0.025, "gain": 0.5}}
    assert s["bittorrent"]["end_game"] is True
    s = load(bare(), set=['swarm.tcp.cc="cubic"', 'swarm.tcp.max_window="inf"'])["swarm"]
    assert s["tcp"]["cc"]["name"] == "cubic" and s["tcp"]["max_window_bytes"] is None


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # The core's checks (crates/slowstart-config/src/config.rs), named as the scenario does.
        (["--set", "swarm.leechers=0"], "error: swarm.leechers: must be in 1..=9999999, got 0"),
        (["--set", "swarm.seeds=0"], "error: swarm.seeds: must be in 1..=10000000, got 0"),
        (
            ["--set", "swarm.piece=30MB"],
            "error: swarm.piece: must not exceed swarm.file (25000000 bytes), got 30000000",
        ),
        (
            ["--set", "swarm.block=1MiB"],
            "error: swarm.block: must not exceed swarm.piece (262144 bytes), got 1048576",
        ),
        (["--set", "swarm.up=-1Mbps"], 'error: swarm.up: must not be negative, got "-1Mbps"'),
        (["--set", "swarm.down=0"], "error: swarm.down: must be in 1..=10000000000000, got 0"),
        (
            ["--set", "swarm.population=quic"],
            'error: swarm.population: expected one of tcp, utp, 50-50, mixed, got "quic"',
        ),
        (
            ["--set", "swarm.seeding=forever"],
            "error: swarm.seeding: expected one of never-leave, random-stay, never_leave, "
            'random_stay, got "forever"',
        ),
        (
            ["--set", 'swarm.delay=["30ms", "1ms"]'],
            "error: swarm.delay: the minimum must not exceed the maximum, got 30000000 > 1000000",
        ),
        (["--set", "swarm.buffer=0pkt"], "error: swarm.buffer: must be in 1..=1000000000, got 0"),
        (["--set", "swarm.buffer=1bdp"], "error: swarm.buffer: "),
        (["--set", "swarm.file=0"], "error: swarm.file: must be in 1..=1000000000000000, got 0"),
        (["--set", "swarm.stop_after=0"], "error: swarm.stop_after: must be >= 1 completion"),
        (["--set", "swarm.stop_after=-1"], "error: swarm.stop_after: expected a number"),
        (["--set", "swarm.stay_factor=-1"], "error: swarm.stay_factor: must be a finite number"),
        (["--set", "swarm.stay_factor=nan"], "error: swarm.stay_factor: expected a number >= 0"),
        (["--set", "swarm.arrival_mean=0s"], "error: swarm.arrival_mean: must be in 1..="),
        (["--set", "swarm.bittorrent.pipeline=0"], "error: swarm.bittorrent.pipeline: must be"),
        (["--set", "swarm.bittorrent.rechoke=0s"], "error: swarm.bittorrent.rechoke: must be"),
        (["--set", "swarm.tcp.mss=abc"], "error: swarm.tcp.mss: expected a positive integer"),
        (["--set", "swarm.utp.cc=warp"], 'error: swarm.utp.cc: unknown algorithm "warp"'),
        (["--set", "swarm.tcp.src=x"], 'error: --set swarm.tcp.src=x: unknown key "src"'),
        (["--set", "swarm.colour=red"], 'error: --set swarm.colour=red: unknown key "colour"'),
        (["--cc", "reno"], "error: --cc: a swarm has no [[flow]] tables"),
    ],
)
def test_bad_swarm_input_exits_2_with_one_line(args, expected, capsys):
    assert main(["run", SWARM_ADSL, *args]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1, captured.err
    assert lines[0].startswith(expected), lines[0]


@pytest.mark.parametrize("key", ["path", "nodes", "link", "flow"])
def test_a_swarm_has_no_path_nodes_links_or_flows(key):
    raw = bare()
    raw[key] = {"rate": "1Mbps", "rtt": "1ms"} if key == "path" else []
    with pytest.raises(ScenarioError, match=rf"^{key}: a scenario with \[swarm\] builds its own"):
        load(raw)


def test_swarm_keys_need_a_swarm(capsys):
    satellite = str(ROOT / "scenarios" / "satellite.toml")
    assert main(["run", satellite, "--set", "swarm.population=utp"]) == 2
    assert "the scenario has no swarm" in capsys.readouterr().err


def test_bad_swarm_input_from_the_command_line():
    proc = cli("run", "swarm-adsl", "--set", "swarm.piece=26MB")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (
        "error: swarm.piece: must not exceed swarm.file (25000000 bytes), got 26000000"
    )


# --- memory (issue #37) ------------------------------------------------------------------------


def test_a_swarm_that_cannot_fit_is_refused_before_it_starts(monkeypatch, capsys):
    # The machine's memory stands at 2 GB whatever it is, so the test is the same anywhere.
    monkeypatch.setattr(memory, "available_bytes", lambda: 2_000_000_000)
    args = ["run", SWARM_ADSL, "--set", "swarm.leechers=100000", "--quiet"]
    assert main(args) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1, captured.err
    peers, per_peer = _core.swarm_peak_bytes(json.dumps(load(SWARM_ADSL)))
    assert peers == 101
    most = 2_000_000_000 // per_peer - 1
    assert lines[0] == (
        f"error: swarm.leechers: 100001 peers need up to {100_001 * per_peer / 1e9:.1f} GB "
        f"({per_peer // 1000} kB each at their connection limits), more than the 2.0 GB this "
        f"machine has available (MemAvailable); at most {most} leechers fit"
    )


def test_a_swarm_that_fits_or_a_machine_that_does_not_say_is_not_refused(monkeypatch):
    config = load(SWARM_ADSL, set=["swarm.leechers=100000"])  # 100 000 is within the bound
    _, per_peer = _core.swarm_peak_bytes(json.dumps(config))
    monkeypatch.setattr(memory, "available_bytes", lambda: 100_001 * per_peer)
    memory.require_swarm_fits(config)
    monkeypatch.setattr(memory, "available_bytes", lambda: None)
    memory.require_swarm_fits(config)
    monkeypatch.setattr(memory, "available_bytes", lambda: 100_001 * per_peer - 1)
    with pytest.raises(ScenarioError, match="^swarm.leechers: .*; at most 99999 leechers fit$"):
        memory.require_swarm_fits(config)
    monkeypatch.setattr(memory, "available_bytes", lambda: per_peer)
    with pytest.raises(ScenarioError, match=r"not one leecher fits .*\(swarm.bittorrent.max_con"):
        memory.require_swarm_fits(config)


def test_a_peers_estimate_grows_with_its_connection_limit_and_buffers():
    def per_peer(*more: str) -> int:
        return _core.swarm_peak_bytes(json.dumps(load(SWARM_ADSL, set=list(more))))[1]

    paper = per_peer()
    assert per_peer("swarm.bittorrent.max_connections=80") > paper
    assert per_peer("swarm.buffer=400pkt") > paper
    assert per_peer("swarm.leechers=1000") == paper


def test_available_memory_is_meminfos(tmp_path, monkeypatch):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24684312 kB\nMemAvailable:   23456789 kB\n")
    monkeypatch.setattr(memory, "MEMINFO", str(meminfo))
    assert memory.available_bytes() == 23456789 * 1024
    monkeypatch.setattr(memory, "MEMINFO", str(tmp_path / "none"))
    assert memory.available_bytes() is None


# --- statistics on hand-computable inputs -----------------------------------------------------


def peer(i, transport="tcp", arrival=0.0, completion=None, rank=None, seed=False):
    done = None if completion is None else arrival + completion
    return {
        "id": i,
        "transport": transport,
        "initial_seed": seed,
        "replacement": False,
        "arrival_s": arrival,
        "done_s": done,
        "completion_s": completion,
        "completion_rank": rank,
        "left_s": None,
        "bytes_up": 0,
        "bytes_down": 0,
        "access_delay_s": 0.01,
        "connections": 1,
    }


def test_kept_downloads_and_the_measurement_window():
    from slowstart.running.swarm_results import kept, peers_frame, window_start

    # Ranks by completion: peer 3 first (done 5), then 1 (6), 4 (9), 2 (12), 5 (20).
    summary = {
        "peers": [
            peer(0, seed=True),
            peer(1, arrival=1, completion=5, rank=2),
            peer(2, arrival=2, completion=10, rank=4),
            peer(3, arrival=3, completion=2, rank=1),
            peer(4, arrival=4, completion=5, rank=3),
            peer(5, arrival=5, completion=15, rank=5),
            peer(6, arrival=6),
        ]
    }
    peers = peers_frame(summary)
    assert list(kept(peers, 1, 3)["id"]) == [1, 4, 2]
    assert list(kept(peers, 3, 10)["id"]) == [2, 5]
    assert window_start(peers, 2) == 6.0 and window_start(peers, 0) == 0.0
    assert window_start(peers, 6) is None


def test_queue_histogram_ccdf_mean_and_share():
    import pandas as pd

    from slowstart.running.swarm_results import (
        add_counts,
        ccdf,
        counts,
        mean_of,
        share_above,
        uplink_samples,
    )

    queues = pd.DataFrame(
        {
            "t_s": [0.0, 0.1, 0.1, 0.2, 0.2, 0.3],
            "link": pd.Categorical(
                ["peer0.up", "peer0.up", "peer1.down", "peer1.up", "peer0.up", "peer1.up"]
            ),
            "queue_bytes": [0, 0, 9000, 1500, 3000, 0],
            "queue_packets": [7, 0, 6, 1, 2, 0],
        }
    )
    samples = uplink_samples(queues, 0.1)  # from 0.1 s on, uplinks only: 0, 1, 2, 0
    assert sorted(samples.tolist()) == [0, 0, 1, 2]
    hist = counts(samples)
    assert hist.tolist() == [2, 1, 1]
    x, p = ccdf(hist)
    assert x.tolist() == [0, 1, 2] and p.tolist() == [0.5, 0.25, 0.0]
    assert mean_of(hist) == 0.75
    assert share_above(hist, 0) == 0.5 and share_above(hist, 2) == 0.0
    assert add_counts([[1, 2], [0, 0, 5]]).tolist() == [1, 2, 5]
    assert uplink_samples(queues, None).size == 0 and mean_of(counts(samples[:0])) is None


def test_ecdf_quartiles_and_mann_whitney():
    from slowstart.running.swarm_results import ecdf, gap, mann_whitney_less, quartiles

    x, y = ecdf([3.0, 1.0, 2.0])
    assert x.tolist() == [1.0, 2.0, 3.0] and y.tolist() == pytest.approx([1 / 3, 2 / 3, 1])
    assert quartiles([1, 2, 3, 4, 5]) == (2.0, 3.0, 4.0) and quartiles([]) is None
    # U = 0, mean 4.5, variance 9 / 12 x 7: z = (0 - 4.5 + 0.5) / sqrt(5.25) = -1.7457.
    assert mann_whitney_less([1, 2, 3], [4, 5, 6]) == pytest.approx(0.04043, abs=1e-4)
    assert mann_whitney_less([4, 5, 6], [1, 2, 3]) == pytest.approx(0.9854, abs=1e-4)
    assert mann_whitney_less([], [1]) is None
    assert gap(90.0, 110.0) == pytest.approx(0.2) and gap(None, 1.0) is None


def _study(times: dict[tuple[str, str], list[tuple[str, float]]], discard: int = 1):
    """A Study whose runs (one seed) complete `times` in order; queue histograms empty."""
    import numpy as np

    from slowstart.reproductions.swarm import Setting, Study, SwarmRun

    runs = []
    for (population, seeding), items in times.items():
        peers = [peer(0, seed=True)] + [
            peer(i + 1, t, arrival=float(i), completion=c, rank=i + 1)
            for i, (t, c) in enumerate(items)
        ]
        summary = {"peers": peers, "swarm": {}, "links": []}
        runs.append(SwarmRun(Setting(population, seeding, 200), 1, summary, np.zeros(1)))
    return Study(runs, discard, 100, 200, (), 12.0)


def test_findings_verdicts_follow_the_stated_tolerances():
    from slowstart.reproductions.swarm import findings

    fast = [("tcp", 999.0)] + [("tcp", 30.0)] * 3  # the first completion is discarded
    mixed_rs = [("tcp", 999.0)] + [("utp", 100.0), ("tcp", 200.0)] * 20
    study = _study(
        {
            ("tcp", "never_leave"): fast,
            ("utp", "never_leave"): [("utp", 999.0)] + [("utp", 36.0)] * 3,
            ("mixed", "never_leave"): [("tcp", 999.0), ("tcp", 31.0), ("utp", 31.0)],
            ("tcp", "random_stay"): [("tcp", 0.0), ("tcp", 150.0)],
            ("utp", "random_stay"): [("utp", 0.0), ("utp", 160.0)],
            ("mixed", "random_stay"): mixed_rs,
        }
    )
    rows = {r.label: r for r in findings(study)}
    assert rows["never leave, TCP swarm: median completion time"].verdict == "ok"
    # 30, 36 and 31 s: (36 - 30) / 32.3 = 18.6% apart, more than the 10% that "alike" allows.
    alike = rows["never leave: populations complete alike"]
    assert alike.verdict == "off" and alike.ours == "medians differ by 18.6%"
    assert rows["random stay: TCP and uTP swarms complete alike"].verdict == "ok"
    sooner = rows["50-50 random stay: uTP vs TCP peers"]
    assert sooner.verdict == "ok" and sooner.ours.startswith("uTP 100.0 s, TCP 200.0 s (-50.0%)")
    assert rows["50-50 never leave: uTP vs TCP peers"].verdict == "ok"
    # No queue samples: reported, not judged.
    assert rows["random stay, TCP: mean uplink queue"].verdict == "-"


# --- small swarms end to end ------------------------------------------------------------------

# Six leechers fetching 2 MB: a few hundredths of a second of wall time per run.
SMALL = [
    "swarm.leechers=6",
    "swarm.file=2MB",
    "swarm.stop_after=6",
    "swarm.arrival_mean=2s",
    "duration=600s",
]


def small_run(*more: str, seed: int = 3):
    from slowstart.running.api import run

    return run(SWARM_ADSL, set=[*SMALL, *more], seed=seed)


def test_same_seed_same_swarm_and_another_seed_differs():
    a, b = small_run(), small_run()
    sa, sb = dict(a.summary), dict(b.summary)
    sa.pop("wall_s"), sb.pop("wall_s")
    assert sa == sb
    assert a.queues.equals(b.queues)
    other = dict(small_run(seed=4).summary)
    other.pop("wall_s")
    assert other["peers"] != sa["peers"]


@pytest.mark.parametrize("seeding", ["never-leave", "random-stay"])
def test_peer_table(seeding):
    from slowstart.running.swarm_results import peers_frame

    r = small_run(f"swarm.seeding={seeding}", "swarm.population=utp")
    s, peers = r.summary, peers_frame(r.summary)
    assert s["flows"] == [] and s["swarm"]["population"] == "utp"
    assert len(peers) == s["swarm"]["peers_joined"] and list(peers["id"]) == sorted(peers["id"])
    assert peers["initial_seed"].sum() == 1 and set(peers["transport"]) == {"utp"}
    done = peers[peers["completion_rank"].notna()]
    assert len(done) == s["swarm"]["completions"] == 6
    assert sorted(done["completion_rank"]) == list(range(1, 7))
    assert (done["completion_s"] - (done["done_s"] - done["arrival_s"])).abs().max() < 1e-6
    # Ranks follow completion instants.
    assert list(done.sort_values("done_s")["completion_rank"]) == list(range(1, 7))
    assert (done["bytes_down"] >= 2_000_000).all()
    # Two channels per peer: uplink 2i, downlink 2i + 1.
    names = [link["name"] for link in s["links"]]
    assert names[:4] == ["peer0.up", "peer0.down", "peer1.up", "peer1.down"]
    assert set(r.queues["link"].astype(str)) <= {n for n in names if n.endswith(".up")}
    if seeding == "never-leave":
        assert peers["left_s"].isna().all()


def test_run_prints_peers_and_writes_the_swarm_files(tmp_path):
    proc = cli(
        "run", "swarm-adsl", *(a for s in SMALL for a in ("--set", s)), "--out", str(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "7 peers joined, 6 completed" in out and "flow  cc" not in out
    assert out.count(" leecher ") == 6 and "uplinks (7):" in out
    names = {"summary.json", "queues.parquet", "peers.parquet", "swarm.png"}
    assert {p.name for p in tmp_path.iterdir()} == names
    import pandas as pd

    peers = pd.read_parquet(tmp_path / "peers.parquet")
    assert len(peers) == 7 and "completion_s" in peers.columns
    assert (tmp_path / "swarm.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# 200 leechers fetching 2 MB, arriving 20 ms apart: completions from about 50 s simulated,
# the 100th at about 70 s, half a second of wall time here (several progress calls).
CROWD = ["swarm.leechers=200", "swarm.file=2MB", "swarm.arrival_mean=20ms"]


def test_progress_is_told_the_swarms_peers_and_completions_and_can_stop_it():
    """Issue #37: a long swarm's progress line. Stopped at the first completion it was told
    of, the summary says what the last call did."""
    from slowstart.running.api import Interrupted, run_config

    told: list[tuple[float, float, dict]] = []

    def progress(now_s: float, end_s: float, swarm: dict) -> None:
        told.append((now_s, end_s, swarm))
        if swarm["completions"] >= 1:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as stopped:
        run_config(load(SWARM_ADSL, set=CROWD), progress)
    s = stopped.value.result.summary
    now_s, end_s, last = told[-1]
    assert s["interrupted"] and abs(s["sim_time_s"] - now_s) < 1e-6 and end_s == 4000.0
    assert (last["peers"], last["completions"]) == (
        s["swarm"]["peers_joined"],
        s["swarm"]["completions"],
    )
    assert 1 <= last["completions"] < 100 and all(t[2]["stop_after"] == 100 for t in told)
    assert [t[2]["peers"] for t in told] == sorted(t[2]["peers"] for t in told)


def test_a_progress_callback_of_two_arguments_still_follows_a_swarm():
    """A callback written before swarms told their state is called as it was."""
    from slowstart.running.api import Interrupted, run_config

    told: list[tuple[float, float]] = []

    def progress(now_s: float, end_s: float) -> None:
        told.append((now_s, end_s))
        if now_s > 30:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as stopped:
        run_config(load(SWARM_ADSL, set=CROWD), progress)
    assert told and abs(stopped.value.result.summary["sim_time_s"] - told[-1][0]) < 1e-6


def test_a_swarms_progress_line_names_its_peers_and_completions():
    from slowstart.progress import fraction, numbers

    swarm = {"peers": 12108, "completions": 3, "stop_after": 100}
    assert numbers(312.4, 4000, "s") == "312/4000 s"
    assert numbers(312.4, 4000, "s", swarm) == "312/4000 s, 12,108 peers joined, 3/100 completed"
    running = {**swarm, "stop_after": None}
    assert numbers(312.4, 4000, "s", running).endswith("12,108 peers joined, 3 completed")
    # The bar: the nearer of the two ends, the duration or the completions asked for.
    assert fraction(400, 4000) == fraction(400, 4000, swarm) == fraction(400, 4000, running) == 0.1
    assert fraction(400, 4000, {**swarm, "completions": 50}) == 0.5


def test_reproduce_swarm_small_and_listed(tmp_path):
    import json

    proc = cli(
        "reproduce",
        "swarm",
        "--leechers",
        "6",
        "--seeds",
        "2",
        "--buffers",
        "2,10",
        "--set",
        "swarm.file=2MB",
        "--json",
        "--out",
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["swarm"]
    # 6 settings at 200 packets and 50-50 random stay at 2 and 10 packets, 2 seeds each.
    assert report["runs"] == 16 and (report["discard"], report["keep"]) == (3, 3)
    labels = [r["label"] for r in report["rows"]]
    assert "50-50 random stay: uTP vs TCP peers" in labels
    # 1500-byte packets at 1 Mbps: 12 ms each; LEDBAT's target is 25 ms.
    for b, where in ((2, "24 ms, below"), (10, "120 ms, above")):
        label = f"50-50 random stay, B = {b} packets ({where} the 25 ms target): uTP and TCP peers"
        assert label in labels
    assert all(r["verdict"] in ("ok", "off", "-") for r in report["rows"])
    pngs = {p.name for p in tmp_path.glob("*.png")}
    assert pngs == {f"swarm-{n}.png" for n in ("rank", "cdf", "queues", "breakdown", "buffer")}
    listed = cli("reproduce", "--list")
    assert listed.returncode == 0 and "swarm " in listed.stdout and "floyd " in listed.stdout
    bad = cli("reproduce", "swarms")
    assert bad.returncode == 2 and "accepted: floyd" in bad.stderr and "swarm" in bad.stderr


def test_a_store_gives_back_each_study_as_it_was_run(tmp_path):
    from slowstart.reproductions.swarm import findings, run_study, stored_studies
    from slowstart.running.store import Store

    store = tmp_path / "results.duckdb"
    small = ["swarm.file=2MB"]
    study = run_study(
        SWARM_ADSL, seeds=[1, 2], buffers=(2, 10), set=small, leechers=6, jobs=1, store=store
    )
    # Another study in the same store: another file, no buffer sweep, one seed.
    other = run_study(
        SWARM_ADSL, seeds=[1], buffers=(), set=["swarm.file=1MB"], leechers=4, jobs=1, store=store
    )
    with Store(store, read_only=True) as s:
        back = sorted(stored_studies(s), key=lambda x: len(x.runs))
    assert [len(b.runs) for b in back] == [6, 16]
    for b, original in zip(back, (other, study), strict=True):
        assert (b.discard, b.keep, b.buffer, b.buffers) == (
            original.discard,
            original.keep,
            original.buffer,
            original.buffers,
        )
        assert {(r.setting, r.seed) for r in b.runs} == {(r.setting, r.seed) for r in original.runs}
        assert [f.as_dict() for f in findings(b)] == [f.as_dict() for f in findings(original)]
    assert back[1].buffers == (2, 10, 200) and back[0].buffers == ()
    assert back[0].notes == ["4 leechers, a 1 MB file, uplink buffer 200 packets"]


def test_a_swarm_result_shows_its_peers_in_a_notebook():
    r = small_run()
    assert repr(r).startswith("<SwarmResult swarm-adsl: 7 peers, 6 completed, ")
    html = r._repr_html_()
    assert "completion_s median" in html and "transport" in html
    assert 'src="data:image/png;base64,' in html
