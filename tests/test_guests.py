"""A user's own controller (python/slowstart/loading/guests.py): a Python class and a WebAssembly
guest run byte-identical to the built-in they restate, wherever a built-in runs; each way a
controller can misbehave ends the run with one line; the store keys on the controller's content."""

from __future__ import annotations

import copy
import json
import math
import os
from pathlib import Path

import pytest

import slowstart
from conftest import ROOT, SMALL, cli
from slowstart import _core
from slowstart.loading.scenario import load
from slowstart.running.api import ControllerFault, run

WASM = ROOT / "target" / "wasm32-unknown-unknown" / "release"
BUILTIN_GUEST = WASM / "builtin_guest.wasm"
RENO_GUEST = WASM / "reno_guest.wasm"
FAULTY_GUEST = WASM / "faulty_guest.wasm"
TEMPLATE_GUEST = WASM / "wasm_controller.wasm"
PYTHON_RENO = ROOT / "examples" / "python" / "reno.py"
# A call's budget under the runtime that runs guests here (the last built, unless
# SLOWSTART_WASM_RUNTIME says): wasmi's fuel, wasmtime's time (crates/slowstart-wasm).
LOOP_BUDGET = {"wasmi": "10000000 instructions", "wasmtime": "1 s"}[
    os.environ.get("SLOWSTART_WASM_RUNTIME") or _core.wasm_runtimes()[-1]
]


@pytest.fixture(scope="module", autouse=True)
def _guests_built() -> None:
    missing = [
        p for p in (BUILTIN_GUEST, RENO_GUEST, FAULTY_GUEST, TEMPLATE_GUEST) if not p.exists()
    ]
    assert not missing, f"build the guests first (make guests): {missing}"


# Three runs that exercise different parts of the interface: an early loss and its recovery
# (Floyd's path), delayed ACKs (two segments an ACK), and a web flow (handshake, request and
# response, an app-limited connection).
CASES = {
    "losses": ("lfn-early-loss", ["duration=4s"]),
    "delayed-acks": (
        "lfn-early-loss",
        ["duration=4s", "flow.0.delayed_ack=true", "flow.0.abc=true"],
    ),
    "web": ("web-initcwnd", []),
}

RENOS = {
    "python": f"{PYTHON_RENO}:Reno",
    "wasm": f"{BUILTIN_GUEST}:algorithm=reno",
    # Reno alone in a module, the guest `make bench` times (examples/reno-guest).
    "wasm-reno-only": str(RENO_GUEST),
}


def _comparable(result: slowstart.Result) -> tuple[dict, dict]:
    summary = copy.deepcopy(result.summary)
    summary.pop("wall_s")
    for f in summary["flows"]:
        f.pop("cc")
    frames = {
        name: getattr(result, name).drop(columns=["cc"], errors="ignore")
        for name in ("flows", "queues", "apps")
    }
    return summary, frames


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", RENOS)
def test_a_reno_of_ones_own_runs_byte_identical_to_the_builtin(case, kind):
    scenario, sets = CASES[case]
    builtin = run(scenario, cc="reno", set=sets)
    own = run(scenario, cc=RENOS[kind], set=sets)
    (s1, f1), (s2, f2) = _comparable(builtin), _comparable(own)
    assert s1 == s2
    for name in f1:
        assert f1[name].equals(f2[name]), name
    file = {
        "python": "reno.py:Reno",
        "wasm": "builtin_guest.wasm",
        "wasm-reno-only": "reno_guest.wasm",
    }
    assert own.summary["flows"][0]["cc"].startswith(file[kind] + "@")


def test_every_builtin_runs_as_a_guest_with_its_own_parameters():
    for spec in ["cubic:beta=0.8", "bbr", "hystart-pb"]:
        name, _, params = spec.partition(":")
        guest = f"{BUILTIN_GUEST}:algorithm={name}" + (f",{params}" if params else "")
        a = run("satellite", cc=spec, duration="3s")
        b = run("satellite", cc=guest, duration="3s")
        (s1, f1), (s2, f2) = _comparable(a), _comparable(b)
        assert s1 == s2, spec
        assert f1["flows"].equals(f2["flows"]), spec


class Doubler(slowstart.Controller):
    """Doubles per window of ACKs, never backs off beyond half: the shortest useful one."""

    def __init__(self, gain=2.0, **common):
        super().__init__(**common)
        self.gain = gain
        self.window = self.initcwnd * self.mss

    def on_ack(self, ev):
        if ev.cwnd_limited and not ev.in_recovery:
            self.window += int(ev.bytes_acked * (self.gain - 1))

    def on_congestion_event(self, ev):
        self.window = max(self.window // 2, 2 * self.mss)

    def on_rto(self, now, bytes_in_flight):
        self.window = self.mss

    def cwnd(self):
        return self.window


def test_a_class_with_its_parameters_and_the_same_result_twice():
    a = run("web-initcwnd", cc={"name": Doubler, "gain": 1.5})
    b = run("web-initcwnd", cc={"name": Doubler, "gain": 1.5})
    assert a.summary["flows"] == b.summary["flows"]
    assert a.summary["flows"][0]["cc"].startswith("test_guests.Doubler@")
    assert a.summary["flows"][0]["cc"].endswith(":gain=1.5")
    faster = run("web-initcwnd", cc={"name": Doubler, "gain": 3})
    assert faster.summary["apps"][0] != a.summary["apps"][0]


def _fault(behaviour: str, **more) -> str:
    """The fault line of a Doubler whose `behaviour` is broken after a few ACKs."""

    class Broken(Doubler):
        acks = 0

        def on_ack(self, ev):
            super().on_ack(ev)
            self.acks += 1

        def broken(self):
            return self.acks >= 3

    def answer(value):
        return lambda self: value if self.broken() else Doubler.cwnd(self)

    if behaviour == "raises":

        def on_ack(self, ev):
            Broken.on_ack(self, ev)
            if self.broken():
                return 1 / 0

        cls = type("Raises", (Broken,), {"on_ack": on_ack})
    elif behaviour in ("pacing_nan", "pacing_negative", "pacing_zero"):
        value = {"pacing_nan": math.nan, "pacing_negative": -5, "pacing_zero": 0}[behaviour]
        cls = type(
            "Paces", (Broken,), {"pacing_rate": lambda self: value if self.broken() else None}
        )
    elif behaviour == "bad_phase":
        cls = type(
            "Phases",
            (Broken,),
            {"phase": lambda self: "warp_speed" if self.broken() else "slow_start"},
        )
    else:
        value = {"zero": 0, "huge": 1 << 60, "float": 14480.5}[behaviour]
        cls = type("Windows", (Broken,), {"cwnd": answer(value)})
    with pytest.raises(ControllerFault) as err:
        run("web-initcwnd", cc=cls)
    message = str(err.value)
    assert "\n" not in message
    assert err.value.result.summary["interrupted"]
    return message


@pytest.mark.parametrize(
    ("behaviour", "said"),
    [
        ("zero", "on_ack at 0.1"),
        ("zero", "cwnd() returned 0 (accepted: 1460..=1125899906842624 bytes"),
        ("huge", "cwnd() returned 1152921504606846976 (accepted:"),
        ("float", "cwnd() returned 14480.5 (accepted: a whole number of bytes"),
        ("pacing_nan", "pacing_rate() returned nan (accepted: a whole number"),
        ("pacing_negative", "pacing_rate() returned -5 (accepted: a whole number"),
        ("pacing_zero", "pacing_rate() returned 0 (accepted: a positive rate"),
        ("bad_phase", 'phase() returned "warp_speed" (accepted: slow_start,'),
        ("raises", "on_ack at 0.1"),
        ("raises", "raised ZeroDivisionError: division by zero (test_guests.py:"),
    ],
)
def test_a_misbehaving_python_controller_is_named_with_what_it_did(behaviour, said):
    message = _fault(behaviour)
    assert message.startswith("cc test_guests."), message
    assert said in message, message


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("trap", "slowstart_on_ack trapped: wasm `unreachable` instruction executed"),
        ("loop", f"slowstart_on_ack ran past its budget of {LOOP_BUDGET} (an endless loop?)"),
        ("grow", "slowstart_on_ack trapped"),
        ("zero_window", "cwnd() returned 0"),
        ("huge_window", "cwnd() returned 1152921504606846976"),
    ],
)
def test_a_misbehaving_guest_is_named_with_what_it_did(fault, said):
    with pytest.raises(ControllerFault) as err:
        run("web-initcwnd", cc=f"{FAULTY_GUEST}:fault={fault},after=3")
    message = str(err.value)
    assert message.startswith("cc faulty_guest.wasm@") and said in message, message


def _summary_json(*args: str) -> dict:
    proc = cli("run", "lfn-early-loss", "--duration", "4s", "--json", "--quiet", *args)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    summary.pop("wall_s")
    for f in summary["flows"]:
        f.pop("cc")
    return summary


@pytest.mark.parametrize("runtime", _core.wasm_runtimes())
def test_each_webassembly_runtime_runs_the_guest_byte_identical(runtime, monkeypatch):
    builtin = _summary_json("--cc", "reno")
    monkeypatch.setenv("SLOWSTART_WASM_RUNTIME", runtime)
    assert _summary_json("--cc", RENOS["wasm"]) == builtin


def test_a_runtime_this_build_lacks_is_one_line(monkeypatch):
    monkeypatch.setenv("SLOWSTART_WASM_RUNTIME", "v8")
    proc = cli("run", "web-initcwnd", "--cc", RENOS["wasm"])
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert 'SLOWSTART_WASM_RUNTIME="v8" is not a runtime of this build (accepted: wasmi' in (
        proc.stderr
    )


def test_the_command_line_says_one_line_and_keeps_what_ran(tmp_path):
    out = tmp_path / "out"
    proc = cli(
        "run", "web-initcwnd", "--cc", f"{FAULTY_GUEST}:fault=trap,after=3", "--out", str(out)
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: cc faulty_guest.wasm@")
    assert f"is in {out}" in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] and "trapped" in summary["fault"]
    assert 0 < summary["sim_time_s"] < 1


def test_a_guest_that_faults_in_a_sweeps_worker_process_is_one_line(tmp_path):
    """The fault is raised in a worker of the sweep's process pool and pickled back to the
    driver (with what was simulated before it): one line naming the controller, exit 2, as in
    the driver's own process, not a broken pool."""
    cc = f"flow.0.cc={FAULTY_GUEST}:fault=trap,after=3"
    store = str(tmp_path / "results.duckdb")
    for jobs in ("1", "2"):
        proc = cli(
            "sweep", "web-initcwnd", "--set", cc, "--vary", "flow.0.initcwnd=4,10",
            "--jobs", jobs, "--store", store, "--quiet",
        )  # fmt: skip
        assert proc.returncode == 2, (jobs, proc.stderr)
        assert proc.stderr.count("\n") == 1, (jobs, proc.stderr)
        assert proc.stderr.startswith("error: cc faulty_guest.wasm@"), (jobs, proc.stderr)
        assert "trapped" in proc.stderr, (jobs, proc.stderr)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda d: d / "absent.wasm", "no such file"),
        (lambda d: _write(d / "junk.wasm", b"#!/bin/sh\n"), "not a WebAssembly module"),
        (lambda d: _write(d / "dir.wasm", None), "is a directory"),
        (lambda d: _write(d / "bad.py", b"def (:\n", ":Bad"), "SyntaxError"),
        (lambda d: _write(d / "none.py", b"x = 1\n", ":Missing"), "defines no class 'Missing'"),
        (lambda d: _write(d / "plain.py", b"class P:\n    pass\n", ":P"), "not a subclass"),
    ],
)
def test_a_controller_that_cannot_be_loaded_is_one_line(tmp_path, make, said):
    ref = make(tmp_path)
    proc = cli("run", "web-initcwnd", "--cc", str(ref))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: flow.0.cc"), proc.stderr
    assert said in proc.stderr


def _write(path: Path, data: bytes | None, suffix: str = "") -> str:
    if data is None:
        path.mkdir()
    else:
        path.write_bytes(data)
    return f"{path}{suffix}"


def test_an_unknown_name_says_how_to_load_ones_own():
    proc = cli("run", "web-initcwnd", "--cc", "warp")
    assert proc.returncode == 2
    assert "or your own controller: PATH.py:CLASS, PATH.wasm or PATH.bpf.o" in proc.stderr


def test_an_edited_controller_is_a_new_run_never_one_from_the_store(tmp_path):
    from slowstart.running.sweeps import sweep

    source = PYTHON_RENO.read_text()
    mine = tmp_path / "mine.py"
    mine.write_text(source)
    store = tmp_path / "results.duckdb"
    vary = {"flow.0.cc": [f"{mine}:Reno"]}
    first = sweep("web-initcwnd", vary, store=store, jobs=1)
    again = sweep("web-initcwnd", vary, store=store, jobs=1)
    assert first.attrs["runs"] == 1 and again.attrs["runs"] == 0
    mine.write_text(source.replace("reduced = self.window", "reduced = self.window  # edited"))
    edited = sweep("web-initcwnd", vary, store=store, jobs=1)
    assert edited.attrs["runs"] == 1
    a = load("web-initcwnd", cc=f"{mine}:Reno")
    assert a["flows"][0]["cc"]["guest"]["path"] == str(mine.resolve())


def test_a_guest_in_a_swarm_and_in_a_sweep_on_a_dask_cluster(tmp_path):
    from slowstart.running.sweeps import sweep

    small = [
        "swarm.leechers=4",
        "swarm.file=1MB",
        "swarm.stop_after=4",
        "swarm.arrival_mean=2s",
        "duration=300s",
    ]
    builtin = run("swarm-adsl", set=[*small, "swarm.utp.cc=utp"])
    guest = run("swarm-adsl", set=[*small, f"swarm.utp.cc={BUILTIN_GUEST}:algorithm=utp"])
    a, b = dict(builtin.summary), dict(guest.summary)
    a.pop("wall_s"), b.pop("wall_s")
    assert a["peers"] == b["peers"] and a["swarm"] == b["swarm"]
    vary = {"flow.0.cc": [f"{BUILTIN_GUEST}:algorithm=reno", f"{PYTHON_RENO}:Reno", "reno"]}
    frame = sweep("web-initcwnd", vary, seeds=[1], cluster="local:2", store=tmp_path / "r.duckdb")
    assert frame.attrs["runs"] == 3
    completions = set(frame["completion_s"]) if "completion_s" in frame else None
    assert completions is None or len(completions) == 1


def test_reproduce_runs_ones_own_controller_beside_the_published_values(tmp_path):
    proc = cli(
        "reproduce", "web-initcwnd", "--cc", f"{PYTHON_RENO}:Reno", "--json", "--out", str(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["web-initcwnd"]["rows"]
    builtin = [r for r in rows if not r["label"].endswith(", reno.py:Reno")]
    own = [r for r in rows if r["label"].endswith(", reno.py:Reno")]
    assert len(own) == len(builtin) == 4
    for b, o in zip(builtin, own, strict=True):
        assert o["label"] == f"{b['label']}, reno.py:Reno"
        assert o["ours"] == b["ours"] and o["published"] is None and o["verdict"] == "-"
    proc = cli("reproduce", "swarm", "--cc", f"{PYTHON_RENO}:Reno")
    assert proc.returncode == 2 and "--set swarm.utp.cc" in proc.stderr


def test_the_python_and_the_webassembly_template_are_one_controller():
    a = run(
        "satellite", cc=f"{ROOT}/examples/python/delay_start.py:DelayStart:rise=0.25", duration="8s"
    )
    b = run("satellite", cc=f"{TEMPLATE_GUEST}:rise=0.25", duration="8s")
    (s1, f1), (s2, f2) = _comparable(a), _comparable(b)
    assert s1 == s2 and f1["flows"].equals(f2["flows"])
    assert s1["flows"][0]["retransmits"] == 0, "the delay signal ends slow start before a loss"


def test_a_cc_tables_name_keeps_a_controllers_parameters():
    ref = f"{ROOT}/examples/python/delay_start.py:DelayStart"

    def cc(value: object) -> dict:
        return load(SMALL, cc=value)["flows"][0]["cc"]

    text = cc(f"{ref}:rise=0.25")
    assert cc({"name": f"{ref}:rise=0.25"}) == text
    assert cc({"name": ref, "rise": 0.25}) == text
    assert text["params"] == {"rise": 0.25}


# Issue #25's order for a start-up the interface can express: Hybla written as a Python
# controller first (examples/python/hybla.py, from tcp_hybla.c), then built in; the two agree
# byte for byte in slow start at rho 24 (satellite), through losses and fast recovery, and
# through timeouts, where Hybla grows as Reno until the repair ends.
HYBLA_CASES = {
    "slow-start": ("satellite", ["duration=20s"]),
    "losses": ("lfn-early-loss", ["duration=4s"]),
    "timeouts": ("satellite", ["duration=20s", "path.loss=0.02"]),
}


@pytest.mark.parametrize("case", HYBLA_CASES)
def test_hybla_written_in_python_first_agrees_with_the_builtin(case):
    scenario, sets = HYBLA_CASES[case]
    builtin = run(scenario, cc="hybla", set=sets)
    own = run(scenario, cc=f"{ROOT}/examples/python/hybla.py:Hybla:rtt0_ms=25", set=sets)
    (s1, f1), (s2, f2) = _comparable(builtin), _comparable(own)
    assert s1 == s2
    assert f1["flows"].equals(f2["flows"])
    if case == "timeouts":
        assert s1["flows"][0]["rto_count"] > 0, "the case must reach the repair after a timeout"


def test_the_scorecard_rates_ones_own_controller_beside_the_builtins(tmp_path):
    mine = f"{PYTHON_RENO}:Reno"
    proc = cli(
        "score", "--path", "web-17kB", "--path", "1g-shallow", "--cc", "reno", "--cc", mine,
        "--json", "--store", str(tmp_path / "r.duckdb"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    card = json.loads(proc.stdout)
    assert card["controllers"] == ["reno", mine]
    for path in card["paths"]:
        cells = path["cells"]
        for metric in path["metrics"]:
            assert cells[mine][metric]["values"] == cells["reno"][metric]["values"], metric
