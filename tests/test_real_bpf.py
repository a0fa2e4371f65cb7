"""`slowstart real --cc x.bpf.o`: a BPF congestion controller registered for a run of the kernel
stack, selected on each flow's sockets, and unregistered on every way out (real/bpf.py).

The objects are compiled here from C (clang -target bpf, CO-RE against the kernel's BTF: no
vmlinux.h needed); their names carry this process's id, so test suites can share a machine.
Tests that register need root, BTF, libbpf and clang, those that run flows also the testbed
(namespaces, /dev/net/tun); elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from argparse import Namespace
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import NETWORK, ROOT, built, cli
from slowstart.cli import check_bpf, check_real_cc
from slowstart.real import bpf, testbed
from test_real import leftovers, processes, until

pytestmark = NETWORK

REASON = testbed.unavailable_reason() or bpf.unavailable_reason()
if REASON is None and shutil.which("clang") is None:
    REASON = "clang is not installed (the test objects are compiled from C)"
needs_bpf = pytest.mark.skipif(REASON is not None, reason=f"skipped: {REASON}")

# A Reno (RFC 5681: slow start to ssthresh, then one segment per window of ACKs; ssthresh
# half the window) in BPF. CO-RE finds tcp_sock's fields by name in the kernel's BTF; the
# local structs list only the ones used.
RENO_C = r"""
typedef unsigned char __u8; typedef unsigned short __u16; typedef unsigned int __u32;
typedef unsigned long long __u64; typedef signed char __s8; typedef short __s16;
typedef int __s32; typedef long long __s64; typedef __u16 __be16; typedef __u32 __be32;
typedef __u32 __wsum;
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
struct sock;
struct tcp_sock {
    __u32 snd_cwnd; __u32 snd_ssthresh; __u32 snd_cwnd_cnt; __u32 prior_cwnd;
} __attribute__((preserve_access_index));
struct tcp_congestion_ops {
    __u32 (*ssthresh)(struct sock *sk);
    void (*cong_avoid)(struct sock *sk, __u32 ack, __u32 acked);
    __u32 (*undo_cwnd)(struct sock *sk);
    __u32 flags;
    char name[16];
};
char _license[] SEC("license") = "GPL";
const volatile __u32 min_ssthresh = 2;
SEC("struct_ops")
void BPF_PROG(t_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
    struct tcp_sock *tp = (struct tcp_sock *)sk;
    if (tp->snd_cwnd < tp->snd_ssthresh) {
        __u32 cwnd = tp->snd_cwnd + acked;
        tp->snd_cwnd = cwnd < tp->snd_ssthresh ? cwnd : tp->snd_ssthresh;
        return;
    }
    tp->snd_cwnd_cnt += acked;
    if (tp->snd_cwnd_cnt >= tp->snd_cwnd) {
        tp->snd_cwnd_cnt -= tp->snd_cwnd;
        tp->snd_cwnd += 1;
    }
}
SEC("struct_ops")
__u32 BPF_PROG(t_ssthresh, struct sock *sk)
{
#ifdef REFUSED
    return (__u32)ctx[3];  /* ssthresh has one argument: the verifier refuses this */
#else
    struct tcp_sock *tp = (struct tcp_sock *)sk;
    __u32 half = tp->snd_cwnd >> 1;
    return half > min_ssthresh ? half : min_ssthresh;
#endif
}
SEC("struct_ops")
__u32 BPF_PROG(t_undo_cwnd, struct sock *sk)
{
    struct tcp_sock *tp = (struct tcp_sock *)sk;
    return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}
SEC(".struct_ops")
struct tcp_congestion_ops VAR = {
    .ssthresh = (void *)t_ssthresh, .cong_avoid = (void *)t_cong_avoid,
    .undo_cwnd = (void *)t_undo_cwnd, .flags = FLAGS, .name = NAME,
};
"""
TCP_CONG_NEEDS_ECN = 0x2

SMALL = """
duration = "30s"
[path]
rate = "20Mbps"
rtt = "50ms"
buffer = "1bdp"
[[flow]]
cc = "reno"
size = "{size}"
"""


def compile_object(folder: Path, name: str, flags: int = 0, refused: bool = False) -> Path:
    """The Reno above as `folder/<name>.bpf.o`, its kernel name `name` (and its struct_ops
    map's, which `bpftool struct_ops show` lists)."""
    src = folder / f"{name}.bpf.c"
    src.write_text(RENO_C, encoding="utf-8")
    out = folder / f"{name}.bpf.o"
    defines = [f"-DFLAGS={flags}", f'-DNAME="{name}"', f"-DVAR={name}"]
    defines += ["-DREFUSED"] if refused else []
    subprocess.run(
        ["clang", "-O2", "-g", "-target", "bpf", *defines, "-c", str(src), "-o", str(out)],
        check=True,
    )
    return out


def tag() -> str:
    """This process's part of a kernel name (at most 15 characters in all)."""
    return str(os.getpid() % 100_000)


@pytest.fixture(scope="module")
def objects(tmp_path_factory):
    if REASON is not None:
        pytest.skip(REASON)
    folder = tmp_path_factory.mktemp("bpf")
    return SimpleNamespace(
        reno=compile_object(folder, f"ss_r{tag()}"),
        ecn=compile_object(folder, f"ss_e{tag()}", flags=TCP_CONG_NEEDS_ECN),
        refused=compile_object(folder, f"ss_x{tag()}", refused=True),
    )


@pytest.fixture(scope="module")
def emu_built():
    yield from built("slowstart-emu")


def name_of(obj: Path) -> str:
    return obj.name.removesuffix(".bpf.o")


def maps(name: str) -> list[int]:
    """The ids of the struct_ops maps named `name` the kernel still has (registered or not):
    `bpftool struct_ops show`, or [] where bpftool is missing."""
    tool = bpf.bpftool()
    if tool is None:
        return []
    out = subprocess.run([tool, "-j", "struct_ops", "show"], capture_output=True, text=True)
    return [m["id"] for m in json.loads(out.stdout or "[]") if m["name"] == name]


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# --- without root -----------------------------------------------------------------------------


def test_a_bpf_value_names_an_object_by_the_cores_grammar():
    assert bpf.is_bpf("x.bpf.o") and bpf.is_bpf("dir/cubic.bpf.o:beta=819")
    assert not bpf.is_bpf("reno") and not bpf.is_bpf("x.wasm") and not bpf.is_bpf("x.bpf.old")
    assert bpf.is_bpf({"name": "x.bpf.o@1", "guest": {"kind": "bpf"}})
    assert not bpf.is_bpf({"name": "x.wasm@1", "guest": {"kind": "wasm"}})
    assert not bpf.is_bpf({"name": "reno", "params": {}})


def test_a_changed_object_is_refused(tmp_path):
    obj = tmp_path / "mine.bpf.o"
    obj.write_bytes(b"\x7fELF first")
    spec = {
        "name": "mine.bpf.o@0",
        "guest": {
            "kind": "bpf",
            "path": str(obj),
            "sha256": hashlib.sha256(obj.read_bytes()).hexdigest(),
        },
    }
    assert bpf.object_bytes(spec, "flow.0.cc") == b"\x7fELF first"
    obj.write_bytes(b"\x7fELF second")
    with pytest.raises(testbed.RealRunError, match="changed since the scenario was loaded"):
        bpf.object_bytes(spec, "flow.0.cc")


def test_globals_go_through_the_extension(monkeypatch):
    seen = {}

    def set_globals(data: bytes, params: dict[str, int]) -> bytes:
        seen.update(params)
        if "nope" in params:
            raise ValueError("no const volatile global 'nope' in .rodata")
        return data + b"!"

    monkeypatch.setattr(bpf, "_core", SimpleNamespace(bpf_set_globals=set_globals))
    assert bpf.set_globals(b"o", {}, "--cc") == b"o"  # nothing to set
    assert bpf.set_globals(b"o", {"beta": 819}, "--cc") == b"o!" and seen == {"beta": 819}
    unknown = "^--cc: setting nope: no const volatile global 'nope'"
    with pytest.raises(testbed.RealRunError, match=unknown):
        bpf.set_globals(b"o", {"nope": 1}, "--cc")


def test_the_name_comes_from_the_kernel_when_the_simulator_cannot_read_the_object(monkeypatch):
    def info(data: bytes) -> dict:
        raise ValueError("reads sock.sk_gso_max_size, which the simulator does not model")

    monkeypatch.setattr(bpf, "_core", SimpleNamespace(bpf_object_info=info))
    assert bpf.object_name(b"o") is None  # registered() then reads it from the loaded map
    monkeypatch.setattr(bpf, "_core", SimpleNamespace(bpf_object_info=lambda d: {"name": "x"}))
    assert bpf.object_name(b"o") == "x"


def test_the_verifiers_complaint_is_the_line_shown():
    log = [
        "libbpf: prog 't_ssthresh': BPF program load failed: Permission denied\n",
        "libbpf: prog 't_ssthresh': -- BEGIN PROG LOAD LOG --\n0: R1=ctx() R10=fp0\n"
        "; return (__u32)ctx[3]; @ t.bpf.c:39\n0: (79) r0 = *(u64 *)(r1 +24)\n"
        "func 'ssthresh' doesn't have 3-th argument\ninvalid bpf_context access off=24 size=8\n"
        "processed 1 insns (limit 1000000) max_states_per_insn 0 total_states 0\n"
        "-- END PROG LOAD LOG --\n",
        "libbpf: failed to load object 'x'\n",
    ]
    assert bpf.verifier_line(log) == "prog 't_ssthresh': invalid bpf_context access off=24 size=8"
    assert bpf.verifier_line(["libbpf: failed to find BTF for extern 'x'\n"]) == (
        "failed to find BTF for extern 'x'"
    )


def test_the_kernel_stack_needs_a_machine_that_registers_it(monkeypatch):
    config = {"flows": [{"cc": {"name": "x.bpf.o@1", "guest": {"kind": "bpf"}}}]}
    assert check_real_cc(Namespace(stack=None, cc="x.bpf.o:beta=1")) is None
    monkeypatch.setattr(bpf, "unavailable_reason", lambda: None)
    assert check_bpf(Namespace(stack=None), config) is None
    monkeypatch.setattr(bpf, "unavailable_reason", lambda: "no BTF (test)")
    assert check_bpf(Namespace(stack="kernel"), config) == "no BTF (test)"
    assert check_bpf(Namespace(stack="both"), config) == "no BTF (test)"
    # The UDP and quinn stacks run it in the simulator's interpreter: nothing to register.
    assert check_bpf(Namespace(stack="udp"), config) is None


def test_without_root_registering_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert bpf.unavailable_reason() == (
        "a BPF controller needs root (CAP_BPF and CAP_NET_ADMIN) to register"
    )
    with pytest.raises(testbed.RealUnavailable, match="needs root"), bpf.registered(b"", "--cc"):
        pass


def test_without_btf_registering_is_refused_in_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(bpf, "VMLINUX_BTF", tmp_path / "vmlinux")
    assert bpf.unavailable_reason() == (
        f"a BPF controller needs a kernel with BTF ({tmp_path / 'vmlinux'} is missing)"
    )


# --- registering (root, BPF) ------------------------------------------------------------------


@needs_bpf
def test_registered_for_the_block_and_gone_after(objects):
    name = name_of(objects.reno)
    data = objects.reno.read_bytes()
    with bpf.registered(data, "--cc") as got:
        assert got == name and name in bpf.available()
        # Anyone's registration of the same name is refused, ours included.
        refused = pytest.raises(testbed.RealRunError, match="already registered")
        with refused, bpf.registered(data, "--cc"):
            pass
        assert name in bpf.available()
    assert name not in bpf.available()
    # On the way out of an exception too.
    with pytest.raises(RuntimeError, match="mid-run"), bpf.registered(data, "--cc"):
        assert name in bpf.available()
        raise RuntimeError("mid-run")
    assert name not in bpf.available()


@needs_bpf
def test_an_object_the_verifier_refuses_is_one_line(objects):
    with (
        pytest.raises(testbed.RealRunError) as e,
        bpf.registered(objects.refused.read_bytes(), "x"),
    ):
        pass
    assert str(e.value) == (
        "x: the kernel refused it: prog 't_ssthresh': invalid bpf_context access off=24 size=8"
    )
    assert name_of(objects.refused) not in bpf.available()


# --- real runs (root, BPF, the testbed) -------------------------------------------------------


@needs_bpf
def test_a_bulk_flow_runs_the_object_through_the_emulated_path(tmp_path, objects, emu_built):
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="2MB"))
    proc = cli("real", str(scenario), "--cc", str(objects.reno), "--json")
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    f, link = s["flows"][0], s["links"][0]
    assert f["cc"].startswith(objects.reno.name + "@")
    assert f["bytes_delivered"] == 2_000_000
    # The emulator's own count: the 2 MB crossed the emulated link in 1382 segments of 1448
    # bytes (and SYN and FIN); a 1-BDP buffer overflows in slow start (measured: 168 drops,
    # 168 retransmits, 1385 packets forwarded), and each drop is resent.
    assert link["forwarded"] >= 1382 + 2
    assert link["drops"] > 0 and link["drops"] <= f["retransmits"] <= link["drops"] + 2
    assert name_of(objects.reno) not in bpf.available()
    # No socket holds it either: the testbed aborts its namespaces' sockets (`ss -K`), which
    # otherwise kept the map 137 s (an orphan retransmitting its FIN into a link gone).
    assert maps(name_of(objects.reno)) == [] and "struct_ops map" not in proc.stderr
    assert leftovers(proc.pid) == []


@needs_bpf
def test_compare_sets_the_objects_simulation_beside_its_kernel_run(tmp_path, objects, emu_built):
    """`compare --cc x.bpf.o`: the simulator interprets the object, the kernel runs it (one
    real run, about 4 s here), the table has both sides, and the name is gone afterwards."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="1MB"))
    out = tmp_path / "out"
    proc = cli(
        "compare", str(scenario), "--cc", str(objects.reno), "--runs", "1", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    header, *rows = proc.stdout.splitlines()
    assert header.split()[:4] == ["metric", "sim", "real", "median"], proc.stdout
    completion = next(r for r in rows if r.startswith("completion_s")).split()
    # metric, sim value and unit, real median value and unit, range, diff: no "-" side.
    assert "-" not in completion[1:5] and completion[-1].endswith("%"), completion
    c = json.loads((out / "compare.json").read_text())
    for side in (c["sim"], *c["real"]):
        assert side["flows"][0]["cc"].startswith(objects.reno.name + "@"), side["flows"][0]
        assert side["flows"][0]["bytes_delivered"] == 1_000_000
    name = name_of(objects.reno)
    assert name not in bpf.available()
    assert maps(name) == [] and "struct_ops map" not in proc.stderr
    assert leftovers(proc.pid) == []


@needs_bpf
def test_a_name_already_registered_is_one_line_and_exit_2(tmp_path, objects, emu_built):
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="100kB"))
    name = name_of(objects.reno)
    with bpf.registered(objects.reno.read_bytes(), "test"):
        proc = cli("real", str(scenario), "--cc", str(objects.reno))
        assert proc.returncode == 2, proc.stderr
        assert one_error_line(proc.stderr) == (
            f"error: flow.0.cc: a congestion control named {name} is already registered "
            f"(another run, or `bpftool struct_ops register`: `bpftool struct_ops unregister "
            f"name {name}` removes the latter)"
        )
        assert name in bpf.available()  # the other's registration stays
    assert leftovers(proc.pid) == []


@needs_bpf
def test_a_failing_emulator_mid_run_unregisters(tmp_path, objects, emu_built, monkeypatch):
    """The object is registered before the testbed opens; the emulator then fails."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="100kB"))
    monkeypatch.setenv(testbed.binary_variable("slowstart-emu"), "/bin/false")
    proc = cli("real", str(scenario), "--cc", str(objects.reno))
    assert proc.returncode == 2
    assert one_error_line(proc.stderr) == "error: slowstart-emu did not start"
    assert name_of(objects.reno) not in bpf.available()
    assert maps(name_of(objects.reno)) == []
    assert leftovers(proc.pid) == []


@needs_bpf
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_signalled_run_unregisters(tmp_path, objects, emu_built, sig):
    """SIGINT and SIGTERM unwind the run; after SIGKILL the kernel closes the link's file
    descriptor, which unregisters it: a dead run leaves no registration, and the next run
    (which removes the dead one's namespaces) registers the same object again."""
    scenario = tmp_path / "big.toml"
    scenario.write_text(SMALL.format(size="60MB"))  # 24 s at 20 Mbps
    name = name_of(objects.reno)
    proc = subprocess.Popen(
        [sys.executable, "-m", "slowstart", "real", str(scenario), "--cc", str(objects.reno)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )

    def sending() -> bool:
        return any("real/_agents.py send " in x for x in processes(proc.pid))

    try:
        assert until(sending, 60), "the run never started sending"
        assert name in bpf.available()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (128 + sig, -sig), err
    assert until(lambda: name not in bpf.available(), 5), bpf.available()
    if sig == signal.SIGKILL:
        # Its namespaces stay until the next run, and their sockets hold the unregistered
        # controller's map; the next run removes them and registers the same name again.
        small = tmp_path / "small.toml"
        small.write_text(SMALL.format(size="100kB"))
        nxt = cli("real", str(small), "--cc", str(objects.reno), "--json")
        assert nxt.returncode == 0, nxt.stderr
        assert leftovers(nxt.pid) == []
    assert leftovers(proc.pid) == []
    assert name not in bpf.available()
    assert maps(name) == []


ECN = """
duration = "30s"
[path]
rate = "20Mbps"
rtt = "50ms"
buffer = "4bdp"
queue = {kind = "red", min_th = 20, max_th = 20, w_q = 1, gentle = false, hard_drop = false}
ecn = true
[[flow]]
cc = "reno"
size = "4MB"
"""


@needs_bpf
def test_an_object_that_needs_ecn_gets_it(tmp_path, objects, emu_built):
    """The flows do not ask for ECN (net.ipv4.tcp_ecn stays at Linux's 2: accept it when
    asked), but a controller whose flags hold TCP_CONG_NEEDS_ECN makes the kernel negotiate
    it and send ECT: the emulator's step queue (K = 20 packets) then marks CE instead of
    dropping. The same Reno without the flag is dropped at the same step."""
    scenario = tmp_path / "ecn.toml"
    scenario.write_text(ECN)

    def run(obj: Path) -> tuple[dict, dict]:
        proc = cli("real", str(scenario), "--cc", str(obj), "--json")
        assert proc.returncode == 0, proc.stderr
        s = json.loads(proc.stdout)
        assert s["flows"][0]["bytes_delivered"] == 4_000_000
        assert name_of(obj) not in bpf.available()
        return s["links"][0], s["flows"][0]

    marked, marked_flow = run(objects.ecn)
    assert marked["marks"] > 0 and marked["drops"] == 0, marked
    assert marked_flow["retransmits"] == 0
    dropped, _ = run(objects.reno)
    assert dropped["marks"] == 0 and dropped["drops"] > 0, dropped


@needs_bpf
@pytest.mark.skipif(
    getattr(bpf._core, "bpf_set_globals", None) is None,
    reason="skipped: this build's extension has no bpf_set_globals (the simulator side)",
)
def test_a_parameter_reaches_the_kernel(tmp_path, objects, emu_built):
    """`x.bpf.o:min_ssthresh=500` sets the object's `const volatile` global before the kernel
    loads it: after the slow-start loss, ssthresh is 500 segments, not half the window."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="2MB"))
    out = tmp_path / "out"
    proc = cli("real", str(scenario), "--cc", f"{objects.reno}:min_ssthresh=500", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    ssthresh = pd.read_parquet(out / "flows.parquet")["ssthresh_bytes"]
    finite = ssthresh[ssthresh < 1e12]
    assert len(finite) and (finite == 500 * 1448).all(), finite.unique()
