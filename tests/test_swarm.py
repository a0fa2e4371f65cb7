"""BitTorrent swarms (issue 10): the [swarm] loader, the CLI on swarms, the statistics of
`slowstart reproduce swarm` on hand-computable inputs, and small swarms end to end."""

from __future__ import annotations

import pytest

from conftest import ROOT, cli
from slowstart.cli import main
from slowstart.scenario import ScenarioError, load

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
        (["--set", "swarm.leechers=0"], "error: swarm.leechers: at least one leecher is needed"),
        (["--set", "swarm.seeds=0"], "error: swarm.seeds: at least one seed is needed"),
        (
            ["--set", "swarm.piece=30MB"],
            'error: swarm.piece: must not exceed swarm.file (25000000 bytes), got "30MB"',
        ),
        (
            ["--set", "swarm.block=1MiB"],
            'error: swarm.block: must not exceed swarm.piece (262144 bytes), got "1MiB"',
        ),
        (["--set", "swarm.up=-1Mbps"], 'error: swarm.up: must not be negative, got "-1Mbps"'),
        (["--set", "swarm.down=0"], "error: swarm.down: must be positive, got 0"),
        (
            ["--set", "swarm.population=quic"],
            'error: swarm.population: expected one of tcp, utp, 50-50, got "quic"',
        ),
        (
            ["--set", "swarm.seeding=forever"],
            'error: swarm.seeding: expected one of never-leave, random-stay, got "forever"',
        ),
        (
            ["--set", 'swarm.delay=["30ms", "1ms"]'],
            'error: swarm.delay: the minimum must not exceed the maximum, got "30ms" > "1ms"',
        ),
        (["--set", "swarm.buffer=0pkt"], "error: swarm.buffer: must hold at least one packet"),
        (["--set", "swarm.buffer=1bdp"], "error: swarm.buffer: "),
        (["--set", "swarm.file=0"], "error: swarm.file: must be positive, got 0"),
        (["--set", "swarm.stop_after=0"], "error: swarm.stop_after: expected a number"),
        (["--set", "swarm.stay_factor=-1"], "error: swarm.stay_factor: expected a number >= 0"),
        (["--set", "swarm.arrival_mean=0s"], "error: swarm.arrival_mean: must be positive"),
        (["--set", "swarm.bittorrent.pipeline=0"], "error: swarm.bittorrent.pipeline: expected"),
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
        'error: swarm.piece: must not exceed swarm.file (25000000 bytes), got "26MB"'
    )
