"""The example BPF congestion controllers (examples/bpf): they build; each object holds exactly
one tcp_congestion_ops, named as its map; every socket access is a CO-RE relocation by field
name (bitfields through BPF_CORE_READ_BITFIELD), which the simulator's VM resolves against its
own tcp_sock; the parameters are const volatile globals with the kernel's defaults; the faulty
objects carry their faults. As root, each registers in the kernel, carries a loopback
transfer set per socket in a fresh network namespace, and unregisters.

The objects are read with a small ELF and BTF reader below (the format: the kernel's
Documentation/bpf/btf.rst), so what is checked is what a loader sees."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import NETWORK, ROOT

# One worker, one test at a time: the build writes one folder, and the kernel test changes
# the machine's list of congestion controllers.
pytestmark = NETWORK

BPF = ROOT / "examples" / "bpf"
BUILD = BPF / "build"
VMLINUX_BTF = Path("/sys/kernel/btf/vmlinux")
# Object, its tcp_congestion_ops (variable and .name alike).
EXAMPLES = {
    "reno": "bpf_reno",
    "cubic": "bpf_cubic",
    "dctcp": "bpf_dctcp",
    "lss": "bpf_lss",
    "template": "bpf_template",
}
FAULTY = [
    "out_of_bounds",
    "endless_loop",
    "zero_cwnd",
    "unknown_kfunc",
    "two_controllers",
    "no_controller",
]


def missing() -> str | None:
    """Why the examples cannot be built here, or None."""
    for tool, package in (("clang", "clang"), ("bpftool", "bpftool"), ("make", "make")):
        if shutil.which(tool) is None:
            return f"no {tool} (Debian: {package}; `make bpf` installs it)"
    if not Path("/usr/include/bpf/bpf_helpers.h").exists():
        return "no libbpf headers in /usr/include/bpf (Debian: libbpf-dev; `make bpf`)"
    if not VMLINUX_BTF.exists():
        return f"no kernel BTF at {VMLINUX_BTF} (a kernel with CONFIG_DEBUG_INFO_BTF)"
    return None


needs_toolchain = pytest.mark.skipif(missing() is not None, reason=missing() or "")


@pytest.fixture(scope="module")
def build() -> Path:
    """examples/bpf built (make does nothing when `make bpf` already did it)."""
    made = subprocess.run(
        ["make", "-s", "-C", str(BPF)], capture_output=True, text=True, timeout=600
    )
    assert made.returncode == 0, made.stdout + made.stderr
    return BUILD


# --- ELF and BTF, as much as the checks need ------------------------------------------------


@dataclass
class Member:
    name: str
    type: int
    bits: int  # offset in the struct
    bitfield: bool


@dataclass
class Type:
    kind: int
    name: str
    ref: int  # the type referred to (pointer, typedef, modifier, var, array element)
    vlen: int
    members: list[Member] = field(default_factory=list)  # struct, union
    entries: list[tuple[int, int, int]] = field(default_factory=list)  # datasec: type, off, size


# BTF kinds (the kernel's Documentation/bpf/btf.rst, section 2.2), and those that only
# qualify another type: typedef, volatile, const, restrict, type tag.
ARRAY, STRUCT, UNION, FUNC, DATASEC = 3, 4, 5, 12, 15
MODIFIERS = {8, 9, 10, 11, 18}
# Bytes after the 12-byte common record: fixed, then per vlen entry (btf.rst, section 2.2).
EXTRA = {1: (4, 0), 3: (12, 0), 4: (0, 12), 5: (0, 12), 6: (0, 8), 13: (0, 8), 14: (4, 0)}
EXTRA |= {15: (0, 12), 17: (4, 0), 19: (0, 12)}
# CO-RE relocation kinds (libbpf's enum bpf_core_relo_kind).
BYTE_OFFSET, BYTE_SIZE, LSHIFT_U64, RSHIFT_U64 = 0, 1, 4, 5


class BpfObject:
    """A BPF ELF object: its sections, function symbols, BTF types and CO-RE relocations."""

    def __init__(self, path: Path) -> None:
        data = path.read_bytes()
        assert data[:4] == b"\x7fELF" and data[4:6] == b"\x02\x01", f"{path}: not ELF64 LE"
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        headers = [
            struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)
        ]
        names = data[headers[shstrndx][4] :]
        section_names = [names[h[0] : names.index(b"\0", h[0])].decode() for h in headers]
        self.sections = {
            n: data[h[4] : h[4] + h[5]] for n, h in zip(section_names, headers, strict=True)
        }
        strtab, symtab = self.sections[".strtab"], self.sections[".symtab"]
        # Symbols by index (for relocations); functions and variables (data objects):
        # name -> (section, offset, size).
        self.symbols, self.functions, self.variables = [], {}, {}
        for off in range(0, len(symtab), 24):
            name, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", symtab, off)
            symbol = strtab[name : strtab.index(b"\0", name)].decode()
            self.symbols.append(symbol)
            if info & 0xF == 2:  # STT_FUNC
                self.functions[symbol] = (section_names[shndx], value, size)
            elif info & 0xF == 1 and shndx < len(section_names):  # STT_OBJECT
                self.variables[symbol] = (section_names[shndx], value, size)
        self._read_btf(self.sections[".BTF"])
        self._read_btf_ext(self.sections.get(".BTF.ext", b""))

    def _read_btf(self, btf: bytes) -> None:
        magic, _, _, hdr_len, type_off, type_len, str_off, _ = struct.unpack_from("<HBBIIIII", btf)
        assert magic == 0xEB9F
        self.strings = btf[hdr_len + str_off :]
        self.types = [Type(0, "void", 0, 0)]
        pos, end = hdr_len + type_off, hdr_len + type_off + type_len
        while pos < end:
            name_off, info, ref = struct.unpack_from("<III", btf, pos)
            kind, vlen, kind_flag = (info >> 24) & 0x1F, info & 0xFFFF, info >> 31
            t = Type(kind, self.string(name_off), ref, vlen)
            fixed, each = EXTRA.get(kind, (0, 0))
            body = pos + 12 + fixed
            if kind == ARRAY:
                t.ref = struct.unpack_from("<I", btf, pos + 12)[0]
            for i in range(vlen if kind in (STRUCT, UNION, DATASEC) else 0):
                a, b, c = struct.unpack_from("<III", btf, body + i * each)
                if kind == DATASEC:
                    t.entries.append((a, b, c))
                elif kind_flag:  # c: bitfield size << 24 | bit offset
                    t.members.append(Member(self.string(a), b, c & 0xFFFFFF, c >> 24 != 0))
                else:
                    t.members.append(Member(self.string(a), b, c, False))
            self.types.append(t)
            pos = body + vlen * each

    def _read_btf_ext(self, ext: bytes) -> None:
        """CO-RE relocations: (section, instruction offset, root type, access, kind)."""
        self.relocations: list[tuple[str, int, int, str, int]] = []
        if len(ext) < 32:
            return
        hdr_len = struct.unpack_from("<I", ext, 4)[0]
        if hdr_len < 32:
            return
        core_off, core_len = struct.unpack_from("<II", ext, 24)
        if not core_len:
            return
        pos = hdr_len + core_off
        end = pos + core_len
        record = struct.unpack_from("<I", ext, pos)[0]
        pos += 4
        while pos < end:
            sec_name, count = struct.unpack_from("<II", ext, pos)
            pos += 8
            for _ in range(count):
                insn, type_id, access, kind = struct.unpack_from("<IIII", ext, pos)
                self.relocations.append(
                    (self.string(sec_name), insn, type_id, self.string(access), kind)
                )
                pos += record

    def string(self, off: int) -> str:
        return self.strings[off : self.strings.index(b"\0", off)].decode()

    def resolve(self, type_id: int) -> Type:
        t = self.types[type_id]
        while t.kind in MODIFIERS:
            t = self.types[t.ref]
        return t

    def field(self, type_id: int, access: str) -> tuple[str, bool]:
        """A relocation's access string ("0:12:3": the root, then member or element
        indices) as `struct.member` (anonymous structs and unions left out), and whether the
        member is a bitfield."""
        path, bitfield = [self.resolve(type_id).name], False
        for index in access.split(":")[1:]:
            t = self.resolve(type_id)
            if t.kind in (STRUCT, UNION):
                member = t.members[int(index)]
                path += [member.name] if member.name else []
                type_id, bitfield = member.type, member.bitfield
            else:
                assert t.kind == ARRAY, (access, t)
                type_id = t.ref
                path.append(f"[{index}]")
        return ".".join(path), bitfield

    def fields(self) -> dict[str, set[int]]:
        """Each relocated field and the relocation kinds applied to it."""
        out: dict[str, set[int]] = {}
        for _, _, type_id, access, kind in self.relocations:
            out.setdefault(self.field(type_id, access)[0], set()).add(kind)
        return out

    def datasec(self, name: str) -> dict[str, tuple[int, int]]:
        """The variables BTF gives a data section: name -> (offset, size). Offsets from the
        symbol table: clang leaves them 0 in BTF, for the loader to fill in (libbpf does)."""
        for t in self.types:
            if t.kind == DATASEC and t.name == name:
                names = [self.types[v].name for v, _, _ in t.entries]
                return {n: self.variables[n][1:] for n in names}
        return {}

    def controllers(self) -> dict[str, str]:
        """Each tcp_congestion_ops of .struct_ops: its variable's name -> its .name."""
        if not self.datasec(".struct_ops"):
            return {}
        name = self.member("tcp_congestion_ops", "name").bits // 8
        data = self.sections.get(".struct_ops", b"")
        return {
            var: data[off + name : off + name + 16].split(b"\0")[0].decode()
            for var, (off, _) in self.datasec(".struct_ops").items()
        }

    def operations(self) -> dict[str, set[str]]:
        """Each tcp_congestion_ops's operations set to a program: variable -> members."""
        members = {m.bits // 8: m.name for m in self.struct("tcp_congestion_ops").members}
        rel = self.sections.get(".rel.struct_ops", b"")
        targets = [struct.unpack_from("<QQ", rel, i) for i in range(0, len(rel), 16)]
        out = {}
        for var, (start, size) in self.datasec(".struct_ops").items():
            out[var] = {
                members[off - start]
                for off, info in targets
                if start <= off < start + size and self.symbols[info >> 32] in self.functions
            }
        return out

    def struct(self, name: str) -> Type:
        return next(t for t in self.types if t.kind == STRUCT and t.name == name)

    def member(self, struct_name: str, name: str) -> Member:
        return next(m for m in self.struct(struct_name).members if m.name == name)

    def instructions(self, function: str) -> list[tuple[int, int, int, int]]:
        """A function's instructions: (opcode, registers, offset, immediate)."""
        section, start, size = self.functions[function]
        code = self.sections[section][start : start + size]
        return [struct.unpack_from("<BBhi", code, i) for i in range(0, len(code), 8)]

    def rodata(self, name: str) -> int:
        off, size = self.datasec(".rodata")[name]
        return int.from_bytes(self.sections[".rodata"][off : off + size], "little", signed=True)


# --- the examples -----------------------------------------------------------------------------


@needs_toolchain
def test_the_examples_and_the_faulty_objects_build(build: Path):
    for name in EXAMPLES:
        assert (build / f"{name}.bpf.o").is_file(), name
    for name in FAULTY:
        assert (build / "faulty" / f"{name}.bpf.o").is_file(), name
    # Every *.bpf.c beside them is one of these: a new example needs its line above.
    assert {p.name.removesuffix(".bpf.c") for p in BPF.glob("*.bpf.c")} == set(EXAMPLES)
    assert {p.name.removesuffix(".bpf.c") for p in BPF.glob("faulty/*.bpf.c")} == set(FAULTY)


@needs_toolchain
@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_holds_one_controller_named_as_its_map(build: Path, name: str):
    obj = BpfObject(build / f"{name}.bpf.o")
    assert obj.controllers() == {EXAMPLES[name]: EXAMPLES[name]}
    assert obj.sections["license"] == b"GPL\0"
    # The operations the kernel requires (net/ipv4/tcp_cong.c, tcp_validate_congestion_control)
    ops = obj.operations()[EXAMPLES[name]]
    assert {"ssthresh", "cong_avoid", "undo_cwnd"} <= ops, ops
    if name == "dctcp":
        assert {"init", "in_ack_event", "set_state", "cwnd_event"} <= ops
        flags = obj.datasec(".struct_ops")["bpf_dctcp"][0]
        flags += obj.member("tcp_congestion_ops", "flags").bits // 8
        assert obj.sections[".struct_ops"][flags : flags + 4] == (2).to_bytes(4, "little")
    if name == "cubic":
        assert {"init", "pkts_acked", "set_state", "cwnd_event"} <= ops


# What each example must reach in the socket, relocated by name (the VM's contract).
FIELDS = {
    "reno": set(),  # kfuncs only
    "cubic": {
        "tcp_sock.snd_cwnd",
        "tcp_sock.snd_ssthresh",
        "tcp_sock.snd_nxt",
        "tcp_sock.snd_una",
        "tcp_sock.tcp_mstamp",
        "tcp_sock.max_packets_out",
        "tcp_sock.is_cwnd_limited",
        "inet_connection_sock.icsk_ca_priv",
        "sock.sk_pacing_rate",
        "sock.sk_pacing_status",
        "sock.sk_gso_max_size",
        "ack_sample.rtt_us",
    },
    "dctcp": {
        "tcp_sock.snd_cwnd",
        "tcp_sock.snd_ssthresh",
        "tcp_sock.snd_nxt",
        "tcp_sock.snd_una",
        "tcp_sock.delivered",
        "tcp_sock.delivered_ce",
        "inet_connection_sock.icsk_ca_state",
        "inet_connection_sock.icsk_ca_priv",
    },
    "lss": {
        "tcp_sock.snd_cwnd",
        "tcp_sock.snd_ssthresh",
        "tcp_sock.snd_cwnd_cnt",
        "tcp_sock.snd_cwnd_clamp",
        "tcp_sock.max_packets_out",
        "tcp_sock.is_cwnd_limited",
    },
    "template": {
        "tcp_sock.snd_cwnd",
        "tcp_sock.snd_ssthresh",
        "tcp_sock.is_cwnd_limited",
        "inet_connection_sock.icsk_ca_priv",
    },
}


@needs_toolchain
@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_reaches_the_socket_by_co_re_relocations(build: Path, name: str):
    obj = BpfObject(build / f"{name}.bpf.o")
    assert ".BTF.ext" in obj.sections
    fields = obj.fields()
    assert FIELDS[name] <= set(fields), sorted(FIELDS[name] - set(fields))
    if not FIELDS[name]:
        assert fields == {}


@needs_toolchain
@pytest.mark.parametrize("name", [*EXAMPLES, *(f"faulty/{f}" for f in FAULTY)])
def test_bitfields_are_read_only_through_core_read_bitfield(build: Path, name: str):
    """BPF_CORE_READ_BITFIELD relocates the byte offset, the size and both shifts; a direct
    read (`tp->is_cwnd_limited`) relocates the offset alone and masks at this kernel's bits."""
    obj = BpfObject(build / f"{name}.bpf.o")
    for _, _, type_id, access, _ in obj.relocations:
        path, bitfield = obj.field(type_id, access)
        if bitfield:
            kinds = {k for _, _, t, a, k in obj.relocations if (t, a) == (type_id, access)}
            assert {BYTE_OFFSET, BYTE_SIZE, LSHIFT_U64, RSHIFT_U64} <= kinds, (path, kinds)


# The parameters a loader sets by name, with the kernel's defaults.
PARAMETERS = {
    "reno": {},
    "cubic": {
        "beta": 717,
        "fast_convergence": 1,
        "hystart": 1,
        "hystart_detect": 3,
        "hystart_low_window": 16,
        "hystart_ack_delta_us": 2000,
        "tcp_friendliness": 1,
        "initial_ssthresh": 0,
        "bic_scale": 41,
        "hz": 1000,
    },
    "dctcp": {"dctcp_shift_g": 4, "dctcp_alpha_on_init": 1024},
    "lss": {"max_ssthresh": 100},
    "template": {"beta": 512, "increase": 1},
}


@needs_toolchain
@pytest.mark.parametrize("name", EXAMPLES)
def test_the_parameters_are_const_volatile_globals(build: Path, name: str):
    obj = BpfObject(build / f"{name}.bpf.o")
    found = {var: obj.rodata(var) for var in obj.datasec(".rodata")}
    # .rodata also holds constant tables (cubic's cube-root table, v), which are not ints
    assert {k: v for k, v in found.items() if k in PARAMETERS[name]} == PARAMETERS[name]
    assert set(found) - set(PARAMETERS[name]) <= {"v"}


# --- the faulty objects -----------------------------------------------------------------------


@needs_toolchain
def test_the_faulty_objects_carry_their_faults(build: Path):
    def load(name: str) -> BpfObject:
        return BpfObject(build / "faulty" / f"{name}.bpf.o")

    # A read 64 KiB past the socket: r += 65536 (ALU64 ADD K), then a load through it.
    ops = load("out_of_bounds").instructions("oob_cong_avoid")
    assert any(op == 0x07 and imm == 65536 for op, _, _, imm in ops)
    # A loop with no way out: a backward jump, no exit.
    ops = load("endless_loop").instructions("loop_cong_avoid")
    assert any(op == 0x05 and off < 0 for op, _, off, _ in ops)
    assert not any(op == 0x95 for op, *_ in ops)
    # cwnd = 0: the store's register holds 0 (clang 14 has no store of an immediate for BPF).
    obj = load("zero_cwnd")
    assert "tcp_sock.snd_cwnd" in obj.fields()
    ops = obj.instructions("zero_cong_avoid")
    assert any(op == 0xB7 and imm == 0 for op, _, _, imm in ops)  # r = 0
    # A kfunc nobody provides: an extern function in BTF (linkage 2), called.
    obj = load("unknown_kfunc")
    externs = {t.name for t in obj.types if t.kind == FUNC and t.vlen == 2}
    assert "slowstart_no_such_kfunc" in externs
    assert controllers_of(obj) == {"bpf_unknown"}
    assert controllers_of(load("two_controllers")) == {"bpf_two_a", "bpf_two_b"}
    obj = load("no_controller")
    assert ".struct_ops" not in obj.sections and obj.controllers() == {}
    assert "orphan_cong_avoid" in obj.functions


def controllers_of(obj: BpfObject) -> set[str]:
    return set(obj.controllers().values())


# --- in the kernel ----------------------------------------------------------------------------


def kernel_unavailable() -> str | None:
    if reason := missing():
        return reason
    if os.geteuid() != 0:
        return "registering a struct_ops controller needs root"
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2) for the network namespace"
    if not Path("/proc/sys/net/ipv4/tcp_available_congestion_control").exists():
        return "no /proc/sys/net/ipv4/tcp_available_congestion_control"
    return None


def available() -> list[str]:
    return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()


def struct_ops_ids() -> set[int]:
    shown = subprocess.run(
        ["bpftool", "struct_ops", "show"], capture_output=True, text=True, timeout=60
    )
    return {int(m) for m in re.findall(r"^(\d+): ", shown.stdout, re.M)}


@pytest.mark.skipif(kernel_unavailable() is not None, reason=kernel_unavailable() or "")
@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_carries_a_loopback_transfer_in_the_kernel(build: Path, name: str):
    """Registered, set per socket, it carries the transfer (with ECN negotiated for
    bpf_dctcp alone: its TCP_CONG_NEEDS_ECN), then unregisters and is gone."""
    cc = EXAMPLES[name]
    if cc in available():
        pytest.skip(f"{cc} is already registered on this machine (not by this test)")
    netns = f"ss-bpf-test-{os.getpid()}"
    registered = subprocess.run(
        ["bpftool", "struct_ops", "register", str(build / f"{name}.bpf.o")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = registered.stdout + registered.stderr
    if registered.returncode != 0 and "Operation not permitted" in said:
        pytest.skip(f"the kernel refuses BPF struct_ops here: {said.strip()[-200:]}")
    if registered.returncode != 0 and cc in available():
        # bpftool says "can't register struct_ops NAME: Success" for the kernel's EEXIST
        pytest.skip(f"{cc} was registered meanwhile by another process on this machine")
    assert registered.returncode == 0, said
    found = re.search(rf"Registered tcp_congestion_ops {cc} id (\d+)", said)
    map_id = int(found[1]) if found else None
    try:
        assert map_id is not None, said
        assert cc in available()
        subprocess.run(["ip", "netns", "add", netns], check=True, timeout=30)
        ran = subprocess.run(
            ["ip", "netns", "exec", netns, sys.executable, str(BPF / "transfer.py")]
            + [cc, "4000000"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
        result = json.loads(ran.stdout)
        assert result["cc"] == cc and result["bytes"] == 4_000_000
        assert result["ecn"] == (name == "dctcp")
    finally:
        subprocess.run(["ip", "netns", "del", netns], capture_output=True, timeout=30)
        # By id: a name would also find an instance some socket still holds (EINPROGRESS).
        gone = subprocess.run(
            ["bpftool", "struct_ops", "unregister"]
            + (["id", str(map_id)] if map_id else ["name", cc]),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert cc not in available()
    # The map goes once its last socket is gone: here at once, the sockets being closed.
    deadline = time.monotonic() + 10
    while map_id in struct_ops_ids() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert map_id not in struct_ops_ids()
