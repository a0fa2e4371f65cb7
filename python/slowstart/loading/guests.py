"""Your own congestion controller: a Python class to sketch an idea, a WebAssembly module to run
it fast, or a Linux BPF object (`struct tcp_congestion_ops`) to run the code the kernel runs.
Each runs wherever a built-in runs (run, sweep, reproduce, swarms, score, real UDP); a BPF
object also runs in the kernel (`slowstart real`, docs/bpf.md).

A scenario names one as a `cc` value: `path/to/my_start.py:MyStart`, `path/to/my_start.wasm`,
`path/to/my_start.bpf.o`, each optionally followed by `:key=value,...` (its own parameters, as
for the built-ins; a BPF object's are its `const volatile` globals); from
Python, the class itself also works (`slowstart.run("satellite", cc=MyStart)`, or
`cc={"name": MyStart, "gain": 2}`). Loading turns the reference into a canonical spec whose
name carries the content's hash (`my_start.py:MyStart@1a2b3c4d5e6f`), so an edited controller
is a new configuration, never one served from the results store, and keeps the content itself
in this process (`PAYLOADS`), from where the core's registry is filled before a run; workers of
a sweep get the payloads with their tasks (`payloads_for`, `install`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.loading.defaults import limits
from slowstart.paths import read_user_bytes

_core = lazy.module("slowstart._core")

HASH_CHARS = 12


class Controller:
    """Base class of a congestion controller written in Python.

    The engine builds one instance per connection with the keywords of the core's
    `CommonParams` (`mss`, `initcwnd`, `abc`, `seed`, `paced`) and the spec's own parameters
    (`my_start.py:MyStart:gain=2` passes `gain=2`), and calls the methods of the core's
    `CongestionController` with the same event fields: times in integer nanoseconds, sizes in
    bytes. After every event it reads `cwnd()`, `ssthresh()`, `pacing_rate()`,
    `send_quantum()` and `phase()` (by default read from `ssthresh()`); a cwnd below one MSS
    or above 2**50 bytes, a pacing rate of 0, a phase the core does not know or an exception
    stops the run with one line naming the controller, the method and the simulated time.

    Event fields: `on_packet_sent(ev)`: now, bytes, bytes_in_flight, total_sent,
    retransmission. `on_ack(ev)`: now, bytes_acked, mss, rtt (None without a sample), srtt,
    min_rtt, one_way_delay (None unless timestamps carry it), rate (None, or a delivery-rate
    sample: delivery_rate in bytes/s, delivered, interval, prior_delivered, is_app_limited,
    rtt), delivered, prior_in_flight, bytes_in_flight, cwnd_limited, sent_before_cwnd_block,
    in_recovery. `on_congestion_event(ev)`: now, ecn, bytes_lost, bytes_in_flight, mss.
    """

    def __init__(
        self,
        *,
        mss: int,
        initcwnd: int = 10,
        abc: bool = True,
        seed: int = 0,
        paced: bool = False,
    ) -> None:
        self.mss = mss
        self.initcwnd = initcwnd
        self.abc = abc
        self.seed = seed
        self.paced = paced

    def on_packet_sent(self, ev: Any) -> None:
        """A data packet left the sender."""

    def on_ack(self, ev: Any) -> None:
        """An ACK delivered `ev.bytes_acked` new bytes."""
        raise NotImplementedError(f"{type(self).__name__} must define on_ack")

    def on_rtt_sample(self, now: int, rtt: int) -> None:
        """An RTT measured outside data ACKs (the handshake's)."""

    def on_congestion_event(self, ev: Any) -> None:
        """A loss or ECN mark starts a recovery episode (once per episode)."""
        raise NotImplementedError(f"{type(self).__name__} must define on_congestion_event")

    def on_recovery_exit(self, now: int) -> None:
        """The recovery episode ended."""

    def on_rto(self, now: int, bytes_in_flight: int) -> None:
        """A retransmission timeout fired."""
        raise NotImplementedError(f"{type(self).__name__} must define on_rto")

    def cwnd(self) -> int:
        """Congestion window in bytes, at least one MSS."""
        raise NotImplementedError(f"{type(self).__name__} must define cwnd")

    def ssthresh(self) -> int | None:
        """Slow-start threshold in bytes, None while unset."""
        return None

    def pacing_rate(self) -> int | None:
        """Pacing rate in bytes per second, None to send as the window allows."""
        return None

    def send_quantum(self) -> int | None:
        """Largest burst the pacer may release at once, in bytes; None for the default."""
        return None

    def phase(self) -> str:
        """One of the core's phase names: slow_start, limited_slow_start,
        conservative_slow_start, congestion_avoidance, recovery, rto_recovery, startup, drain,
        probe_bw, probe_rtt. Unless overridden, read from `ssthresh()` as RFC 5681 §3.1 does:
        slow start while it is None or cwnd is below it, else congestion avoidance; a class
        defining neither is in slow start throughout, and its slow-start exit is not measured."""
        ssthresh = self.ssthresh()
        if ssthresh is None or self.cwnd() < ssthresh:
            return "slow_start"
        return "congestion_avoidance"


class GuestError(ValueError):
    """A controller reference that cannot be loaded; the message names the field."""


@dataclass(frozen=True)
class Payload:
    """What a worker needs to register a controller: its kind and content (WebAssembly bytes,
    Python source with the class name, or the class itself when it came as an object)."""

    kind: str  # "wasm" | "bpf" | "python"
    content: bytes | str | type
    cls: str = ""


# Every controller this process has loaded or was sent, by canonical name.
PAYLOADS: dict[str, Payload] = {}


def _reference(value: str) -> dict[str, Any] | None:
    """`PATH.py:Class[:params]`, `PATH.wasm[:params]` or `PATH.bpf.o[:params]` by the core's grammar
    (`_core.guest_reference`); None for anything else."""

    try:
        return _core.guest_reference(value)
    except UnicodeEncodeError:  # a lone surrogate (from argv) names no file the core reads
        return None


def is_reference(name: object) -> bool:
    """Whether a cc value names a user's controller rather than a built-in."""
    if isinstance(name, type):
        return True
    return isinstance(name, str) and _reference(name) is not None


def split_reference(value: str) -> tuple[str, str]:
    """`"x.py:Cls:gain=2"` → (`"x.py:Cls"`, `"gain=2"`); `"x.wasm"` → (`"x.wasm"`, `""`)."""
    ref = _reference(value)
    assert ref is not None, value
    name = f"{ref['path']}:{ref['class']}" if ref["kind"] == "python" else ref["path"]
    return name, ref["params"] or ""


def _read(path: Path, field: str) -> bytes:
    """A controller's file: regular, and no larger than the core takes a module
    (`controller_file_bytes`, a Python source too)."""
    return read_user_bytes(path, "a controller", limits()["controller_file_bytes"], field)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _code_parts(code: types.CodeType) -> tuple[Any, ...]:
    """What a function's code does, without where it was read from (a class imported from a
    file and the same class loaded from that file by path have the same parts)."""
    consts = tuple(
        _code_parts(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts
    )
    return (
        code.co_qualname,
        code.co_code,
        consts,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_argcount,
        code.co_kwonlyargcount,
    )


def _value_part(value: object) -> str:
    """A value a method uses, as the digest takes it: a class or a module by its name (not
    where it was loaded from), anything else by its repr."""
    if isinstance(value, type | types.ModuleType):
        return getattr(value, "__qualname__", value.__name__)
    return repr(value)


def _function_parts(fn: types.FunctionType, seen: set[int]) -> list[str]:
    """A function's code, defaults, the values it closes over and the module-level values and
    functions it names (a constant or a helper beside the class), each function once."""
    if id(fn) in seen:
        return [fn.__qualname__]
    seen.add(id(fn))
    parts = [repr(_code_parts(fn.__code__)), repr(fn.__defaults__)]
    parts += [_value_part(c.cell_contents) for c in fn.__closure__ or ()]
    names: list[str] = []
    stack = [fn.__code__]
    while stack:
        code = stack.pop()
        names += code.co_names
        stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    for name in sorted(set(names) & fn.__globals__.keys()):
        value = fn.__globals__[name]
        if isinstance(value, types.FunctionType):
            parts += [name, *_function_parts(value, seen)]
        else:
            parts.append(f"{name}={_value_part(value)}")
    return parts


def _class_digest(cls: type) -> str:
    """The class's methods (see `_function_parts`) and its other attributes, so two classes
    made by the same code with different values are two controllers, and the same class is
    one however it was passed (as an object or a file)."""
    parts = [cls.__qualname__]
    seen: set[int] = set()
    for klass in cls.__mro__:
        if klass is Controller or klass is object:
            continue
        for key, value in sorted(vars(klass).items()):
            if isinstance(value, types.FunctionType):
                parts += [key, *_function_parts(value, seen)]
            elif not key.startswith("__"):
                parts.append(f"{key}={value!r}")
    return _digest("\0".join(parts).encode())


def resolve(ref: str | type, field: str) -> dict[str, Any]:
    """A reference (`x.py:Cls`, `x.wasm`, or a class) → {"name", "guest"} of its canonical
    spec, its payload kept in PAYLOADS. GuestError naming `field` if it cannot be read."""
    if isinstance(ref, type):
        if not issubclass(ref, Controller):
            raise GuestError(
                f"{field}: {ref.__qualname__} is not a subclass of slowstart.Controller"
            )
        _check_init(ref, field)
        digest = _class_digest(ref)
        label = f"{ref.__module__}.{ref.__qualname__}"
        name = f"{label}@{digest[:HASH_CHARS]}"
        PAYLOADS[name] = Payload("python", ref, ref.__qualname__)
        return {"name": name, "guest": {"kind": "python", "path": "", "sha256": digest}}
    m = _reference(ref)
    if m is not None and m["kind"] == "python":
        path = Path(m["path"]).expanduser()
        source = _read(path, field)
        digest = _digest(source)
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError:
            raise GuestError(f"{field}: {str(path)!r} is not UTF-8 Python source") from None
        name = f"{path.name}:{m['class']}@{digest[:HASH_CHARS]}"
        payload = Payload("python", text, m["class"])
        _python_class(name, payload, str(path.resolve()), field)  # fail now, not in a worker
        PAYLOADS[name] = payload
        guest = {"kind": "python", "path": str(path.resolve()), "sha256": digest}
        return {"name": name, "guest": guest}
    if m is not None:
        kind = m["kind"]
        path = Path(m["path"]).expanduser()
        module = _read(path, field)
        digest = _digest(module)
        name = f"{path.name}@{digest[:HASH_CHARS]}"
        _check_module(kind, name, module, f"{field}: {path.name}")
        PAYLOADS[name] = Payload(kind, module)
        guest = {"kind": kind, "path": str(path.resolve()), "sha256": digest}
        return {"name": name, "guest": guest}
    raise GuestError(f"{field}: expected {_core.GUEST_HELP}, got {ref!r}")


def _register_module(kind: str, name: str, module: bytes) -> None:
    """Register a WebAssembly module or a BPF object with the core; ValueError if it cannot run."""
    if kind == "bpf":
        _core.register_bpf(name, module)
    else:
        _core.register_wasm(name, module)


def _check_module(kind: str, name: str, module: bytes, field: str) -> None:
    """Register a WebAssembly module or BPF object with the core now, so that one that cannot
    run is refused while loading, naming the field."""
    try:
        _register_module(kind, name, module)
    except ImportError:  # loading without the extension: the run checks it
        return
    except ValueError as e:
        raise GuestError(f"{field}: {e}") from None


# Classes made from Python sources, by canonical name (one module per source).
_CLASSES: dict[str, type] = {}


def _python_class(name: str, payload: Payload, filename: str, field: str) -> type:
    if isinstance(payload.content, type):
        return payload.content
    if name in _CLASSES:
        return _CLASSES[name]
    module = types.ModuleType(f"slowstart_guest_{name.rsplit('@', 1)[-1]}")
    module.__file__ = filename
    try:
        code = compile(str(payload.content), filename, "exec")
        exec(code, module.__dict__)  # noqa: S102 - running the user's own controller is the point
    except Exception as e:  # noqa: BLE001 - any error in the user's file is reported as one line
        raise GuestError(f"{field}: {os.path.basename(filename)}: {_one_line(e)}") from None
    cls = module.__dict__.get(payload.cls)
    if not isinstance(cls, type):
        found = sorted(
            k
            for k, v in module.__dict__.items()
            if isinstance(v, type) and issubclass(v, Controller) and v is not Controller
        )
        raise GuestError(
            f"{field}: {os.path.basename(filename)} defines no class {payload.cls!r} "
            f"(its controllers: {', '.join(found) or 'none'})"
        )
    if not issubclass(cls, Controller):
        raise GuestError(
            f"{field}: {payload.cls} in {os.path.basename(filename)} is not a subclass of "
            "slowstart.Controller"
        )
    _check_init(cls, f"{field}: {os.path.basename(filename)}")
    _CLASSES[name] = cls
    return cls


def _check_init(cls: type, at: str) -> None:
    """The engine builds a controller with the keywords of `Controller.__init__` (the core's
    `CommonParams`): a class whose `__init__` takes them neither by name nor as `**common` is
    refused at load, naming the fix, rather than failing in the run with Python's TypeError."""
    common = list(inspect.signature(Controller).parameters)
    try:
        inspect.signature(cls).bind_partial(**dict.fromkeys(common, 0))
    except TypeError:
        raise GuestError(
            f"{at}: {cls.__name__}.__init__ does not take the keywords every controller is "
            f"built with ({', '.join(common)}); add **common to it and call "
            "super().__init__(**common)"
        ) from None
    except ValueError:  # no signature to read (a builtin): the run tells
        return


def _one_line(e: BaseException) -> str:
    where = ""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if isinstance(e, SyntaxError):
        return f"SyntaxError: {e.msg} (line {e.lineno})"
    if tb is not None:
        where = f" (line {tb.tb_lineno})"
    return f"{type(e).__name__}: {e}{where}".replace("\n", " ")


def guest_specs(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The specs of the users' controllers a config runs (its flows' and its swarm's), by
    canonical name."""
    specs = [f.get("cc") for f in config.get("flows", [])]
    swarm = config.get("swarm")
    if isinstance(swarm, dict):
        specs += [swarm.get(k, {}).get("cc") for k in ("tcp", "utp")]
    return {s["name"]: s for s in specs if isinstance(s, dict) and "guest" in s}


def guest_names(config: dict[str, Any]) -> list[str]:
    """The canonical names of the users' controllers a config runs."""
    return sorted(guest_specs(config))


def payloads_for(configs: list[dict[str, Any]]) -> dict[str, Payload]:
    """The payloads a worker needs for `configs` (sent with its tasks)."""
    names = {n for c in configs for n in guest_names(c)}
    return {n: PAYLOADS[n] for n in sorted(names) if n in PAYLOADS}


def install(payloads: dict[str, Payload]) -> None:
    """Keep payloads sent to this worker."""
    PAYLOADS.update(payloads)


@dataclass(frozen=True)
class Carrying:
    """A worker's task `fn` that brings the users' controllers its configs run: pickled with
    each batch (to a process pool or a Dask cluster), it installs them before running."""

    fn: Any
    payloads: dict[str, Payload]

    def __call__(self, item: Any) -> Any:
        install(self.payloads)
        return self.fn(item)


def register(config: dict[str, Any]) -> None:
    """Register with the core every user's controller `config` runs (once per process). A name
    this process has no payload for is loaded again from the path its spec recorded, if the
    content there still has the recorded hash."""
    for name, spec in guest_specs(config).items():
        register_one(name, spec["guest"])


def register_one(name: str, guest: dict[str, Any]) -> None:
    """Register one user's controller by its canonical name and `guest` table (its spec's),
    unless it is already."""
    if _core.is_registered(name):
        return
    payload = PAYLOADS.get(name) or _reload(name, guest)
    if payload.kind in ("wasm", "bpf"):
        assert isinstance(payload.content, bytes)
        try:
            _register_module(payload.kind, name, payload.content)
        except ValueError as e:
            raise GuestError(f"cc {name}: {e}") from None
    else:
        cls = _python_class(name, payload, guest.get("path") or name, f"cc {name}")
        _core.register_python(name, cls)


def _reload(name: str, guest: dict[str, Any]) -> Payload:
    path = Path(guest.get("path") or "")
    field = f"cc {name}"
    if not guest.get("path"):
        raise GuestError(f"{field}: a class given as an object, not sent to this process")
    data = _read(path, field)
    if _digest(data) != guest.get("sha256"):
        raise GuestError(f"{field}: {str(path)!r} has changed since the run was configured")
    if guest.get("kind") in ("wasm", "bpf"):
        payload = Payload(guest["kind"], data)
    else:
        payload = Payload("python", data.decode("utf-8"), name.split(":")[-1].split("@")[0])
    PAYLOADS[name] = payload
    return payload


def tells_no_phase(name: str) -> bool:
    """Whether the Python controller `name` defines neither `phase()` nor `ssthresh()`: its
    phase is slow start throughout, so its slow-start exit is never measured."""
    payload = PAYLOADS.get(name)
    if payload is None or payload.kind != "python":
        return False
    cls = payload.content if isinstance(payload.content, type) else _CLASSES.get(name)
    return cls is not None and cls.phase is Controller.phase and cls.ssthresh is Controller.ssthresh


def keyed_by_code(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of `config` with each user's controller named by its code alone (where it was
    read from, and whether as a file or a class, left out): what the results store keys on."""
    out = json.loads(json.dumps(config))
    specs = [f.get("cc") for f in out.get("flows", [])]
    if isinstance(out.get("swarm"), dict):
        specs += [out["swarm"].get(k, {}).get("cc") for k in ("tcp", "utp")]
    for spec in specs:
        if not isinstance(spec, dict) or "guest" not in spec:
            continue
        name = spec["name"]
        payload = PAYLOADS.get(name)
        cls = payload.content if payload and isinstance(payload.content, type) else None
        cls = cls or _CLASSES.get(name)
        code = _class_digest(cls) if cls is not None else spec["guest"]["sha256"]
        spec["name"] = f"{spec['guest']['kind']}@{code}"
        del spec["guest"]
    return out


def from_folder(value: object, folder: Path) -> object:
    """A reference written in a scenario file, its relative path taken from the file's folder
    (as `cargo` reads a manifest's paths); anything else unchanged."""
    ref = _reference(value) if isinstance(value, str) else None
    if ref is None or Path(ref["path"]).expanduser().is_absolute():
        return value
    assert isinstance(value, str)
    written = value.lstrip()
    if not written.startswith(ref["path"]):
        return value
    return str(folder / ref["path"]) + written[len(ref["path"]) :]
