"""Types of the Rust extension (crates/slowstart-py)."""

from collections.abc import Callable
from typing import Any

__version__: str

def run(
    config_json: str,
    progress: Callable[..., object] | None = None,
    qlog: str | None = None,
    pcap: str | None = None,
    stream: Callable[[dict[str, Any]], object] | None = None,
) -> dict[str, Any]:
    """Run a canonical JSON config; `progress(now_s, end_s)` about every 100 ms of wall time, for a
    swarm `progress(now_s, end_s, swarm)`, swarm {"peers": joined so far, "completions",
    "stop_after": int or None}. `qlog` and `pcap` are folders for one qlog file per flow and one
    capture per link direction (OSError if one cannot be written). `stream(chunk)` takes the trace
    rows as the run goes (chunk: "flows", "queues", "apps", "phase_names", "link_names", as below);
    the returned tables then hold only the rows after the last chunk; its exception stops the run
    and is raised. Not for swarms (ValueError).

    Returns {"summary": JSON str, "kind": "flows" or "swarm", "flows": {column: (bytes, dtype,
    unset, codes)}, "queues": {...}, "apps": {...}, "phase_names": [str], "link_names": [str]}
    (see running.columns.decode). Ctrl-C
    stops the run and returns what it has, its summary saying "interrupted". Raises
    ValueError("<field>: <message>") for a bad config.
    """

def validate(config_json: str) -> None:
    """Parse and check a canonical JSON config; ValueError("<field>: <message>") if bad."""

def swarm_peak_bytes(config_json: str) -> tuple[int, int] | None:
    """A swarm's peers (seeds and leechers) and the most bytes one holds at its limits
    (crates/slowstart-sim, `swarm::engine::peak_bytes_per_peer`); None without a swarm.
    ValueError("<field>: <message>") if the config is bad."""

def algorithms() -> str:
    """JSON list of {name, summary, source, slow_start (the default slow-start rule, or null
    for an algorithm without one), params: [{name, doc, default, accepted}]}."""

def defaults() -> str:
    """JSON object of every default of the canonical config (crates/slowstart-config/src/
    config/, exported by schema.rs): flow, web, bittorrent, trace, swarm (with its tcp and utp
    transports), swarm_decided (a swarm transport's fields the swarm sets itself), path (by
    `[path]` key) and path_access_queue, cross, program, queue (each discipline's parameters,
    by kind); words and word_lists: each choice's accepted words with the canonical value of
    each (a map, and [word, value] pairs in the order messages list them); limits; and keys
    (crates/slowstart-config/src/keys.rs): {"tables": {TABLE: [{key, unit, field, fields,
    doc, fallback?, words?, unwritten?}]}, "not_in_swarm_flow", "not_with_swarm",
    "swarm_tables", "queue_kinds"}, each table's TOML keys in the order messages list them,
    with the canonical fields each fills, its one-line meaning, the key it falls back to and
    the words it accepts."""

def schema() -> str:
    """JSON object of the names a run reports under: `flow` and `link` (an empty summary row
    of each, keys in order) and `flows` and `queues` (trace column names in order)."""

CC_HELP: str
"""What a `cc` value may be, for error messages (crates/slowstart-config/src/cc_text.rs)."""

GUEST_HELP: str
"""What a `cc` value may name besides a built-in, for error messages
(crates/slowstart-config/src/scenario/cc.rs)."""

def load_scenario(
    raw: dict[str, Any],
    host: Any,
    set: list[str] | str | None = None,
    cc: str | dict[str, Any] | None = None,
    seed: int | None = None,
    duration: str | int | float | None = None,
    until: str = "checked",
) -> dict[str, Any]:
    """The core's scenario loader (crates/slowstart-config/src/scenario/) on a raw scenario with
    `slowstart.load`'s overrides, as far as `until` says: "overridden" (the raw scenario with
    them applied), "built" (the canonical config, not yet checked by the core's rules) or
    "checked". `host` has guest(reference, field) -> (name, guest), trace(name, field) ->
    (times, count, last_ms) and is_file(path) -> bool (slowstart.loading.scenario `_Files`).
    ValueError with the loader's one line."""

def set_value(text: str) -> Any:
    """A `--set` value as the loader reads it: a TOML value, else the text itself."""

def parse_value(
    unit: str, value: Any, field: str, mss: int = 0, what: str = "an integer >= 0"
) -> Any:
    """One value read as the loader reads a key of unit kind `unit` ("time", "rate", "size",
    "size_or_inf", "count", "window", "loss"); ValueError with its line."""

def buffer_limit(
    value: Any, field: str, rate_bps: int, path: tuple[int, int] | None = None
) -> dict[str, int]:
    """A buffer → the canonical queue limit at `rate_bps`, a BDP multiple of a [path]'s
    (rate_bps, rtt_ns); ValueError with its line."""

def scenario_defaults() -> str:
    """JSON: every scenario table's defaults as a scenario writes them, the loader's."""

def written(unit: str, canonical_json: str) -> str:
    """JSON: a canonical value (JSON) as a scenario writes a key of unit kind `unit`."""

def guest_reference(text: str) -> dict[str, Any] | None:
    """The user's controller `text` starts with: {"kind": "python", "wasm" or "bpf", "path", "class"
    (None for wasm), "params" (the text after its colon, or None)}; None if it names none."""

def register_wasm(name: str, module: bytes) -> None:
    """Register a WebAssembly controller module under `name` (its content hash in the name);
    ValueError with one line if the module does not fit the guest interface."""

def register_bpf(name: str, object: bytes) -> None:
    """Register a BPF tcp_congestion_ops object under `name`; ValueError if it cannot run."""

def bpf_object_info(object: bytes) -> dict[str, Any]:
    """{"name", "flags", "hooks", "kfuncs", "globals"} of a BPF object; ValueError if it cannot
    run."""

def bpf_set_globals(object: bytes, params: dict[str, Any]) -> bytes:
    """The object with `params` written into its globals; ValueError naming the global."""

def wasm_runtimes() -> list[str]:
    """The WebAssembly runtimes this build has (`wasmi`, and `wasmtime` with the cargo feature
    `jit`), the default last."""

def register_python(name: str, cls: type) -> None:
    """Register a Python controller class under `name`; the engine builds one instance per
    connection, with the keywords mss, initcwnd, abc, seed, paced and the spec's parameters."""

def is_registered(name: str) -> bool:
    """Whether `name` is registered as a user's controller in this process."""

def udp_endpoint(args: list[str]) -> int:
    """Run one endpoint of `slowstart real --stack udp` in this process, as the `slowstart-udp`
    binary does with the same arguments, and return its exit status; the loop runs without the
    GIL and takes it only for a Python controller's calls."""

# The events a Python controller's methods receive (crates/slowstart-py/src/guest.rs): times in
# integer nanoseconds, sizes in bytes, as in slowstart_cc.

class SentEvent:
    """`on_packet_sent(ev)`: a data packet left the sender."""

    now: int
    bytes: int
    bytes_in_flight: int
    total_sent: int
    retransmission: bool

class RateSample:
    """The delivery-rate sample of an ACK (draft-cheng-iccrg-delivery-rate-estimation)."""

    delivery_rate: int
    delivered: int
    interval: int
    prior_delivered: int
    is_app_limited: bool
    rtt: int

class AckEvent:
    """`on_ack(ev)`: one ACK delivered `bytes_acked` new bytes."""

    now: int
    bytes_acked: int
    mss: int
    rtt: int | None
    srtt: int
    min_rtt: int
    one_way_delay: int | None
    rate: RateSample | None
    delivered: int
    prior_in_flight: int
    bytes_in_flight: int
    cwnd_limited: bool
    sent_before_cwnd_block: bool
    in_recovery: bool

class CongestionEvent:
    """`on_congestion_event(ev)`: a loss (or ECN mark) starts a recovery episode."""

    now: int
    ecn: bool
    bytes_lost: int
    bytes_in_flight: int
    mss: int
