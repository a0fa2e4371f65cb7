"""A Linux BPF congestion controller in the simulator (crates/slowstart-bpf): the object `bpftool
struct_ops register` loads runs where a built-in runs, the kernel's Reno within 0.5% of the
built-in `reno`, CUBIC within 2% of `cubic`, Limited Slow-Start's rounds as `lss`'s; its
`const volatile` globals set by `key=value`; every way an object can misbehave is one line.

The objects are examples/bpf's, built by `make bpf` (Debian's clang, libbpf-dev and bpftool)."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT, cli
from slowstart import _core
from slowstart.loading.scenario import load
from slowstart.running.api import ControllerFault, run

BUILD = ROOT / "examples" / "bpf" / "build"
RENO, CUBIC, DCTCP, LSS = (BUILD / f"{n}.bpf.o" for n in ("reno", "cubic", "dctcp", "lss"))
FAULTY = BUILD / "faulty"

pytestmark = pytest.mark.skipif(
    not RENO.exists() and shutil.which("clang") is None,
    reason="no clang to build the BPF examples (make bpf installs Debian's clang, libbpf-dev "
    "and bpftool)",
)


@pytest.fixture(scope="module", autouse=True)
def _objects_built() -> None:
    missing = [p for p in (RENO, CUBIC, DCTCP, LSS) if not p.exists()]
    assert not missing, f"build the examples first (make bpf): {missing}"


def _flow(scenario: str, cc: str, *overrides: str) -> dict:
    return run(scenario, cc=cc, set=list(overrides)).summary["flows"][0]


def _close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * abs(b)


# Floyd's early loss to the 3500-segment cap (net100 notes; `reproduce floyd`'s first row), and
# the satellite path's start; the figures the issue names.
PATHS = {
    "floyd": ("lfn-early-loss", ["duration=285s"]),
    "satellite": ("satellite", []),
}
FIELDS = ["bytes_delivered", "time_to_full_bw_s", "max_cwnd_bytes", "slow_start_exit_s"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    ("builtin", "obj", "tolerance"), [("reno", RENO, 0.005), ("cubic", CUBIC, 0.02)]
)
def test_the_kernels_controller_agrees_with_the_builtin(path, builtin, obj, tolerance):
    scenario, overrides = PATHS[path]
    want = _flow(scenario, builtin, *overrides)
    got = _flow(scenario, str(obj), *overrides)
    assert got["cc"].startswith(obj.name + "@")
    for field in FIELDS:
        if want[field] is None:
            assert got[field] is None, field
        else:
            assert _close(got[field], want[field], tolerance), (field, got[field], want[field])


def _crossing(flows, segments: int, mss: int) -> float:
    """When cwnd first reaches `segments`."""
    return float(flows.loc[flows["cwnd_bytes"] >= segments * mss, "t_s"].iloc[0])


def test_limited_slow_start_grows_max_ssthresh_over_2_segments_a_round():
    # RFC 3742 §2: above max_ssthresh (100), at most max_ssthresh/2 = 50 segments per RTT, so
    # 200 -> 400 segments takes at least 4 rounds (one in standard slow start); the BPF object
    # takes as long as the built-in.
    mss = 1460
    times = {}
    for name, cc in {"builtin": "lss:max_ssthresh=100", "bpf": str(LSS)}.items():
        flows = run("net100-lss", cc=cc).flows
        times[name] = _crossing(flows, 400, mss) - _crossing(flows, 200, mss)
    assert times["bpf"] >= 4 * 0.075, times
    assert _close(times["bpf"], times["builtin"], 0.02), times


def test_globals_are_set_by_key_value_as_a_skeleton_sets_them():
    # max_ssthresh 50: the limit starts sooner, as the built-in's parameter does.
    default = _flow("net100-lss", str(LSS))
    fifty = _flow("net100-lss", f"{LSS}:max_ssthresh=50")
    builtin = _flow("net100-lss", "lss:max_ssthresh=50")
    assert fifty["time_to_full_bw_s"] > default["time_to_full_bw_s"]
    assert _close(fifty["bytes_delivered"], builtin["bytes_delivered"], 0.01)
    info = _core.bpf_object_info(LSS.read_bytes())
    assert info["name"] == "bpf_lss" and "max_ssthresh" in info["globals"]


@pytest.mark.parametrize(
    ("cc", "said"),
    [
        (f"{LSS}:nonesuch=1", "nonesuch: not a global of bpf_lss (its globals: max_ssthresh"),
        (f"{LSS}:max_ssthresh=-1", "max_ssthresh: expected an integer from 0 to 4294967295"),
        (f"{LSS}:max_ssthresh=1.5", "max_ssthresh: expected an integer"),
    ],
)
def test_a_global_the_object_cannot_take_is_one_line(cc, said):
    with pytest.raises(ValueError) as err:
        run("net100-lss", cc=cc, duration="1s")
    assert said in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_the_object_sets_the_kernel_globals_the_simulator_ran():
    data = LSS.read_bytes()
    patched = _core.bpf_set_globals(data, {"max_ssthresh": 77})
    assert patched != data and len(patched) == len(data)
    # The patched object runs as the parameter does.
    path = BUILD / "lss77.test.bpf.o"
    path.write_bytes(patched)
    try:
        a = _flow("net100-lss", str(path), "duration=2s")
        b = _flow("net100-lss", f"{LSS}:max_ssthresh=77", "duration=2s")
    finally:
        path.unlink()
    assert a["bytes_delivered"] == b["bytes_delivered"]


def test_dctcp_needs_ecn_and_reacts_to_marks_as_the_builtin():
    # DCTCP's flag TCP_CONG_NEEDS_ECN turns ECN on for its flows; on the two-bottleneck path of
    # Alizadeh et al. Fig. 17 the BPF DCTCP's goodputs are the built-in's within 5%.
    config = load("dctcp-fig17", cc=str(DCTCP), duration="2s")
    assert all(f["ecn"] for f in config["flows"])
    want = run("dctcp-fig17", cc="dctcp", duration="2s").summary["flows"]
    got = run("dctcp-fig17", cc=str(DCTCP), duration="2s").summary["flows"]
    total = sum(f["bytes_delivered"] for f in got)
    assert _close(total, sum(f["bytes_delivered"] for f in want), 0.05)
    retransmits = [sum(f["retransmits"] for f in flows) for flows in (got, want)]
    assert _close(retransmits[0], retransmits[1], 0.05), retransmits


def test_the_same_object_and_seed_give_the_same_bytes():
    a = cli("run", "satellite", "--cc", str(CUBIC), "--json", "--quiet")
    b = cli("run", "satellite", "--cc", str(CUBIC), "--json", "--quiet")
    assert a.returncode == 0, a.stderr
    sa, sb = json.loads(a.stdout), json.loads(b.stdout)
    sa.pop("wall_s"), sb.pop("wall_s")
    assert sa == sb


@pytest.mark.parametrize(
    ("name", "said"),
    [
        (
            "out_of_bounds",
            "cong_avoid: reads or writes 4 bytes at offset 65536 of the socket, which has",
        ),
        ("endless_loop", "ran 1000000 instructions without returning"),
        ("zero_cwnd", "left snd_cwnd at 0 (accepted: 1 or more segments)"),
    ],
)
def test_a_misbehaving_object_stops_the_run_with_one_line(name, said):
    with pytest.raises(ControllerFault) as err:
        run("web-initcwnd", cc=str(FAULTY / f"{name}.bpf.o"))
    message = str(err.value)
    assert message.startswith(f"cc {name}.bpf.o@"), message
    assert said in message and "\n" not in message, message
    assert " s: " in message, "the simulated time"
    assert err.value.result.summary["interrupted"]


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("unknown_kfunc", "calls the kernel function slowstart_no_such_kfunc, which the simulator"),
        ("two_controllers", "has 2 struct_ops"),
        ("no_controller", "has no tcp_congestion_ops"),
    ],
)
def test_an_object_that_cannot_run_is_refused_before_the_run(name, said):
    with pytest.raises(ValueError) as err:
        load("web-initcwnd", cc=str(FAULTY / f"{name}.bpf.o"))
    assert str(err.value).startswith(f"flow.0.cc: {name}.bpf.o: "), str(err.value)
    assert said in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_the_command_line_refuses_a_bad_object_with_one_line_and_exit_2(tmp_path):
    bogus = tmp_path / "bogus.bpf.o"
    bogus.write_bytes(b"not an ELF object")
    ran = cli("run", "satellite", "--cc", str(bogus))
    assert ran.returncode == 2, ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and "bogus.bpf.o" in lines[0] and "not a BPF ELF object" in lines[0]
    ran = cli("run", "web-initcwnd", "--cc", str(FAULTY / "endless_loop.bpf.o"))
    assert ran.returncode == 2, ran.stderr
    assert "endless_loop.bpf.o@" in ran.stderr and "without returning" in ran.stderr


def test_a_sweeps_worker_processes_run_the_object():
    import slowstart

    table = slowstart.sweep(
        "satellite",
        {"flow.0.initcwnd": ["10", "20"]},
        set=[f'flow.0.cc="{RENO}"'],
        jobs=2,
    )
    want = [_flow("satellite", "reno", f"flow.0.initcwnd={w}")["completion_s"] for w in (10, 20)]
    assert list(table["completion_s"]) == want


def test_a_swarms_tcp_peers_run_the_object():
    # The swarm's TCP counts one MSS per ACK (abc = false, ns-2's agents), Linux's Reno the
    # segments delivered: the same bytes move, give or take a few percent.
    overrides = ["swarm.leechers=6", "swarm.population=tcp", "duration=120s"]
    down = {}
    for cc in ("reno", str(RENO)):
        peers = run("swarm-adsl", set=[*overrides, f'swarm.tcp.cc="{cc}"']).summary["peers"]
        down[cc] = sum(p["bytes_down"] for p in peers)
    assert down[str(RENO)] > 0 and _close(down[str(RENO)], down["reno"], 0.05), down
