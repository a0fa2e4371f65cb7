"""A BPF congestion controller on the kernel stack: `slowstart real --cc x.bpf.o`.

An object (clang -target bpf) with a `tcp_congestion_ops` in a `.struct_ops` section is
registered with the kernel for the length of a run (`registered`), selected per socket by
the endpoints (TCP_CONGESTION, as a built-in is), and unregistered when the run ends.

The loader is libbpf itself (the system's libbpf.so.1, called through ctypes) in this process,
not bpftool. The object's struct_ops map is created with BPF_F_LINK, so the registration is a
BPF link (BPF_LINK_CREATE, attach type BPF_STRUCT_OPS) and lasts exactly as long as its file
descriptor, which only this process holds (close-on-exec): closing it unregisters the
controller at once, and the kernel closes it when the process ends however it ends (an
exception, SIGINT, SIGTERM, SIGKILL, the OOM killer), so no run can leave a registration
behind, not even a killed one, and the next run has nothing to guess about. bpftool 7.1's
`struct_ops register` (libbpf 1.1) registers a map without a link: it stays registered after
bpftool exits until someone runs `bpftool struct_ops unregister`, so a killed run would leave
it, and cleanup would rest on pid files and on the next run. A `.struct_ops.link` section
(libbpf 1.2) is not needed: libbpf 1.1 creates the map with BPF_F_LINK when asked to
(`bpf_map__set_map_flags`), and the link is made here.

A name already registered (by anyone: another run, bpftool, a module) is refused in one line,
before anything is loaded when the object's name is known (`object_name`), else by the kernel
(EEXIST). After the link is closed the name must be gone from
`net.ipv4.tcp_available_congestion_control`, checked. The struct_ops map itself stays in
`bpftool struct_ops show` while a socket still runs the controller (docs/bpf-real.md).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.real.testbed import RealRunError, RealUnavailable

_core = lazy.module("slowstart._core")

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
VMLINUX_BTF = Path("/sys/kernel/btf/vmlinux")
LIBBPF = "libbpf.so.1"
# linux/bpf.h
BPF_MAP_TYPE_STRUCT_OPS = 26
BPF_F_LINK = 1 << 13
BPF_STRUCT_OPS = 44  # enum bpf_attach_type, Linux 6.4
# How long the name may take to leave tcp_available_congestion_control once the link is
# closed (it leaves at once: unregistering is synchronous).
GONE_WITHIN_S = 2.0
# How long the struct_ops map may take to go once no socket runs the controller.
MAP_FREED_WITHIN_S = 1.0


# --- what the simulator side provides -------------------------------------------------------


def object_name(data: bytes) -> str | None:
    """The controller's kernel name (its ops' `.name`) read from the object, None if the
    simulator could not run the object (the kernel may: it then tells the name, after loading,
    `_ops_name`)."""
    try:
        return str(_core.bpf_object_info(data)["name"])
    except ValueError:  # e.g. a socket field the simulator does not model
        return None


def set_globals(data: bytes, params: dict[str, Any], label: str) -> bytes:
    """The object with its `const volatile` globals named in `params` set (in `.rodata`), as
    the simulated run sets them; RealRunError in one line for one it lacks."""
    if not params:
        return data
    try:
        return bytes(_core.bpf_set_globals(data, dict(params)))
    except (ValueError, TypeError) as e:  # the simulator's reader must take the object
        raise RealRunError(f"{label}: setting {', '.join(params)}: {e}") from None


# --- a cc value that names an object ----------------------------------------------------------


def is_bpf(cc: object) -> bool:
    """Whether a cc value (a string, or a loaded spec) names a BPF object."""
    if isinstance(cc, dict):
        return (cc.get("guest") or {}).get("kind") == "bpf"
    if not isinstance(cc, str):
        return False
    ref = _core.guest_reference(cc)
    return ref is not None and ref["kind"] == "bpf"


def object_bytes(cc: dict[str, Any], label: str) -> bytes:
    """The object a spec names, as loaded (the same hash), its parameters set."""
    guest = cc["guest"]
    try:
        data = Path(guest["path"]).read_bytes()
    except OSError as e:
        raise RealRunError(f"{label}: {guest['path']}: {e.strerror}") from None
    if guest.get("sha256") and hashlib.sha256(data).hexdigest() != guest["sha256"]:
        raise RealRunError(f"{label}: {guest['path']} changed since the scenario was loaded")
    return set_globals(data, cc.get("params") or {}, label)


# --- this machine ------------------------------------------------------------------------------


def available() -> list[str]:
    """The kernel's registered congestion controls (every namespace sees the same)."""
    return AVAILABLE.read_text(encoding="ascii").split()


def unavailable_reason() -> str | None:
    """Why a BPF controller cannot be registered here, or None."""
    if os.geteuid() != 0:
        return "a BPF controller needs root (CAP_BPF and CAP_NET_ADMIN) to register"
    if not VMLINUX_BTF.exists():
        return f"a BPF controller needs a kernel with BTF ({VMLINUX_BTF} is missing)"
    if not AVAILABLE.exists():
        return f"no {AVAILABLE}: not a Linux kernel with TCP congestion control"
    try:
        _libbpf()
    except OSError:
        return f"a BPF controller needs libbpf ({LIBBPF}: apt install libbpf1)"
    return None


def bpftool() -> str | None:
    """bpftool, if installed (only to show struct_ops maps in tests and docs; not needed)."""
    return shutil.which("bpftool") or next(
        (p for p in ("/usr/sbin/bpftool", "/sbin/bpftool") if os.path.exists(p)), None
    )


# --- libbpf ------------------------------------------------------------------------------------

_PRINT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
_LIB: dict[str, Any] = {}
# libbpf's messages during the current load (its verifier log among them).
_LOG: list[str] = []


@_PRINT
def _print(level: int, fmt: bytes, args: int) -> int:
    buf = ctypes.create_string_buffer(8192)
    _LIB["libc"].vsnprintf(buf, len(buf), fmt, ctypes.c_void_p(args))
    _LOG.append(buf.value.decode("utf-8", "replace"))
    return 0


def _libbpf() -> Any:
    if "bpf" in _LIB:
        return _LIB["bpf"]
    lib = ctypes.CDLL(LIBBPF, use_errno=True)
    p, i, u32 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32
    for name, res, args in (
        ("libbpf_set_print", p, [_PRINT]),
        ("bpf_object__open_mem", p, [ctypes.c_char_p, ctypes.c_size_t, p]),
        ("bpf_object__next_map", p, [p, p]),
        ("bpf_object__load", i, [p]),
        ("bpf_object__close", None, [p]),
        ("bpf_map__type", i, [p]),
        ("bpf_map__map_flags", u32, [p]),
        ("bpf_map__set_map_flags", i, [p, u32]),
        ("bpf_map__fd", i, [p]),
        ("bpf_map__attach_struct_ops", p, [p]),
        ("bpf_link__disconnect", None, [p]),
        ("bpf_link__destroy", i, [p]),
        ("bpf_link_create", i, [i, i, i, p]),
        ("bpf_map__value_size", u32, [p]),
        ("bpf_obj_get_info_by_fd", i, [i, p, p]),
        ("bpf_map_get_fd_by_id", i, [u32]),
        ("bpf_map_lookup_elem", i, [i, p, p]),
        ("btf__load_vmlinux_btf", p, []),
        ("btf__free", None, [p]),
        ("btf__find_by_name_kind", i, [p, ctypes.c_char_p, u32]),
        ("btf__type_by_id", p, [p, u32]),
        ("btf__name_by_offset", ctypes.c_char_p, [p, u32]),
    ):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    _LIB["libc"] = ctypes.CDLL(None)
    lib.libbpf_set_print(_print)
    _LIB["bpf"] = lib
    return lib


def verifier_line(log: list[str]) -> str:
    """The first line of libbpf's messages that says why a load failed: the verifier's
    complaint (the line before its `processed N insns`), else libbpf's own error."""
    lines = [line.strip() for msg in log for line in msg.splitlines() if line.strip()]
    prog = ""
    for k, line in enumerate(lines):
        m = re.match(r"libbpf: prog '([^']+)': BPF program load failed", line)
        if m:
            prog = f"prog '{m.group(1)}': "
        if line.startswith("processed ") and "insns" in line:
            for prev in reversed(lines[:k]):
                if not re.match(r"^(;|\d+: |from \d+ to|--|R\d|libbpf:)", prev):
                    return prog + prev
    for line in lines:
        if line.startswith("libbpf:") and ("fail" in line or "error" in line.lower()):
            return line.removeprefix("libbpf: ")
    return lines[-1] if lines else "refused"


class _Loaded:
    """An opened and loaded object and its link, released in `close` (link first)."""

    def __init__(self) -> None:
        self.obj: int | None = None
        self.attached: list[int] = []
        self.link_fd: int | None = None
        self.registered = False
        self.map_id: int | None = None  # the struct_ops map's, once loaded

    def close(self) -> None:
        lib = _LIB.get("bpf")
        if self.link_fd is not None:
            fd, self.link_fd = self.link_fd, None
            os.close(fd)  # unregisters the controller
        for link in self.attached:
            # With BPF_F_LINK nothing was registered by the map itself: only free libbpf's
            # bookkeeping (its detach would delete the map's element, EOPNOTSUPP).
            lib.bpf_link__disconnect(link)
            lib.bpf_link__destroy(link)
        self.attached = []
        if self.obj is not None:
            obj, self.obj = self.obj, None
            lib.bpf_object__close(obj)


def _load(data: bytes, label: str, loaded: _Loaded) -> int:
    """Load `data` into the kernel, its one struct_ops map filled but not registered (the
    map, returned, is made with BPF_F_LINK); RealRunError in one line if the kernel refuses."""
    lib = _libbpf()
    del _LOG[:]
    obj = lib.bpf_object__open_mem(data, len(data), None)
    if not obj:
        why = os.strerror(ctypes.get_errno())
        raise RealRunError(f"{label}: libbpf cannot open it ({verifier_line(_LOG) or why})")
    loaded.obj = obj
    maps, m = [], None
    while True:
        m = lib.bpf_object__next_map(obj, m)
        if not m:
            break
        if lib.bpf_map__type(m) == BPF_MAP_TYPE_STRUCT_OPS:
            maps.append(m)
    if len(maps) != 1:
        raise RealRunError(
            f"{label}: expected one tcp_congestion_ops in a .struct_ops section, found "
            f"{len(maps)} struct_ops maps"
        )
    (st,) = maps
    lib.bpf_map__set_map_flags(st, lib.bpf_map__map_flags(st) | BPF_F_LINK)
    if lib.bpf_object__load(obj) != 0:
        raise RealRunError(f"{label}: the kernel refused it: {verifier_line(_LOG)}")
    link = lib.bpf_map__attach_struct_ops(st)
    if not link:
        why = os.strerror(ctypes.get_errno())
        raise RealRunError(f"{label}: the kernel refused its struct_ops ({why})")
    loaded.attached.append(link)
    loaded.map_id = _map_id(lib.bpf_map__fd(st))
    return st


def _map_id(fd: int) -> int | None:
    """The kernel's id of the map behind `fd` (struct bpf_map_info: type, then id)."""
    info, size = ctypes.create_string_buffer(128), ctypes.c_uint32(128)
    if _libbpf().bpf_obj_get_info_by_fd(fd, info, ctypes.byref(size)) != 0:
        return None
    return int.from_bytes(info.raw[4:8], "little")


def map_alive(map_id: int) -> bool:
    """Whether the kernel still has the map of id `map_id` (something still holds it)."""
    fd = _libbpf().bpf_map_get_fd_by_id(map_id)
    if fd < 0:
        return False
    os.close(fd)
    return True


def _register(st: int, label: str, loaded: _Loaded) -> None:
    """Register the loaded struct_ops map `st`: a link, its fd held in `loaded`.
    FileExistsError if its name is taken."""
    fd = _libbpf().bpf_link_create(_libbpf().bpf_map__fd(st), 0, BPF_STRUCT_OPS, None)
    if fd < 0:
        if -fd == errno.EEXIST:
            raise FileExistsError
        raise RealRunError(f"{label}: the kernel refused to register it ({os.strerror(-fd)})")
    loaded.link_fd, loaded.registered = fd, True


# struct btf_type (name_off, info, size) and struct btf_member (name_off, type, offset).
_BTF_KIND_STRUCT = 4


def _member_offset(lib: Any, btf: int, struct: str, member: str) -> tuple[int, int]:
    """(byte offset, type id) of `member` in kernel struct `struct`, from the kernel's BTF."""
    tid = lib.btf__find_by_name_kind(btf, struct.encode(), _BTF_KIND_STRUCT)
    if tid < 0:
        raise LookupError(struct)
    t = ctypes.cast(lib.btf__type_by_id(btf, tid), ctypes.POINTER(ctypes.c_uint32))
    info = t[1]
    vlen, kflag = info & 0xFFFF, info >> 31
    for k in range(vlen):
        name_off, mtype, offset = t[3 + 3 * k], t[4 + 3 * k], t[5 + 3 * k]
        if lib.btf__name_by_offset(btf, name_off) == member.encode():
            return ((offset & 0xFFFFFF) if kflag else offset) // 8, mtype
    raise LookupError(f"{struct}.{member}")


def _ops_name(st: int) -> str:
    """The loaded map's ops' `.name`, as the kernel holds it (the map's value, laid out as
    the kernel's `bpf_struct_ops_tcp_congestion_ops`, found in its BTF)."""
    lib = _libbpf()
    btf = lib.btf__load_vmlinux_btf()
    if not btf:
        raise RealRunError("cannot read the kernel's BTF")
    try:
        data, _ = _member_offset(lib, btf, "bpf_struct_ops_tcp_congestion_ops", "data")
        name, _ = _member_offset(lib, btf, "tcp_congestion_ops", "name")
    finally:
        lib.btf__free(btf)
    size = lib.bpf_map__value_size(st)
    value, key = ctypes.create_string_buffer(size), ctypes.c_uint32(0)
    if lib.bpf_map_lookup_elem(lib.bpf_map__fd(st), ctypes.byref(key), value) != 0:
        raise RealRunError(f"cannot read the struct_ops map ({os.strerror(ctypes.get_errno())})")
    return value.raw[data + name : data + name + 16].split(b"\0")[0].decode("ascii", "replace")


def _already(name: str, label: str) -> RealRunError:
    return RealRunError(
        f"{label}: a congestion control named {name} is already registered (another run, or "
        f"`bpftool struct_ops register`: `bpftool struct_ops unregister name {name}` removes "
        "the latter)"
    )


def _gone(name: str) -> bool:
    deadline = time.monotonic() + GONE_WITHIN_S
    while name in available():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@contextlib.contextmanager
def registered(data: bytes, label: str) -> Iterator[str]:
    """Register the BPF controller in `data` for the block, yielding its kernel name;
    unregistered on every way out, then checked gone from tcp_available_congestion_control.
    RealUnavailable without root, BTF or libbpf; RealRunError for a name already registered
    or an object the kernel refuses (`label` names it in the line)."""
    reason = unavailable_reason()
    if reason:
        raise RealUnavailable(reason)
    name = object_name(data)
    if name is not None and name in available():
        raise _already(name, label)
    loaded = _Loaded()
    try:
        st = _load(data, label, loaded)
        if name is None:  # as the kernel has it, loaded
            name = _ops_name(st)
        if name in available():
            raise _already(name, label)
        try:
            _register(st, label, loaded)
        except FileExistsError:  # registered by someone meanwhile
            raise _already(name, label) from None
        yield name
    finally:
        loaded.close()
        if name is not None and loaded.registered and not _gone(name):
            message = f"{name} is still registered {GONE_WITHIN_S:g} s after its link closed"
            if sys.exc_info()[0] is None:
                raise RealRunError(message)
            print(f"warning: {message}", file=sys.stderr)
        if loaded.map_id is not None and not _freed(loaded.map_id):
            print(
                f"warning: {name or label} is unregistered, but a socket still runs it: its "
                f"struct_ops map (id {loaded.map_id}) stays in `bpftool struct_ops show` until "
                "that socket closes",
                file=sys.stderr,
            )


def _freed(map_id: int) -> bool:
    """Whether the map has gone within MAP_FREED_WITHIN_S (its last holder a socket being
    destroyed)."""
    deadline = time.monotonic() + MAP_FREED_WITHIN_S
    while map_alive(map_id):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def flow_label(i: int) -> str:
    return f"flow.{i}.cc"


@contextlib.contextmanager
def registered_flows(config: dict[str, Any]) -> Iterator[dict[str, str]]:
    """Every BPF object the config's flows run, registered for the block: canonical spec
    name → kernel name (one registration per distinct spec)."""
    names: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        for i, flow in enumerate(config["flows"]):
            cc = flow["cc"]
            if is_bpf(cc) and cc["name"] not in names:
                data = object_bytes(cc, flow_label(i))
                names[cc["name"]] = stack.enter_context(registered(data, flow_label(i)))
        yield names
