"""The generated reference pages of the documentation (docs/hooks.py writes them into the
site at build time): every scenario key, every algorithm and every queue discipline.

Nothing here restates a fact the code owns. Which keys a table takes is the loader's
(scenario.py, apps.py); each default is the core's (`slowstart.loading.defaults`, from config.rs);
each bound is what the core says when a value is out of range (the loader asks it, through
`load`, with a huge value); algorithms and their parameters are the registry's
(`_core.algorithms()`). What is written here is a key's unit and one line on what it means;
`scenario_keys` fails when a key the loader takes has none, or one names a key it does not.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slowstart import lazy
from slowstart.loading import apps
from slowstart.loading import scenario as sc
from slowstart.loading.defaults import (
    _core_defaults,
    defaults,
    rate_text,
    size_text,
    spellings,
    time_text,
)
from slowstart.loading.scenario import load
from slowstart.units import ScenarioError

_core = lazy.module("slowstart._core")


# A unit: what a value of it looks like (to probe the loader with), and a huge one (to make the
# core state its bound). None: a value that has no bound to probe (a word, a table).
UNITS: dict[str, tuple[Any, Any]] = {
    "time": ("7ms", "5000000h"),
    "rate": ("7Mbps", "10000000Tbps"),
    "size": ("7kB", "10000000TB"),
    "window": ("7seg", "10000000TB"),
    "buffer": ("70pkt", "10000000000pkt"),
    "integer": (7, 10**19),
    "number": (0.5, 1e300),
    "probability": (0.01, 2.0),
    "boolean": (True, None),
    "word": (None, None),
    "algorithm": ("reno", None),
    "table": (None, None),
    "list": (None, None),
    "node": (None, None),
    "text": ("x", None),
}


@dataclass(frozen=True)
class Table:
    """A table of a scenario: its title, where `--set` reaches it, the keys the loader takes,
    where its defaults are, a scenario it loads in, and per key (unit, meaning)."""

    title: str
    at: str
    keys: tuple[str, ...]
    defaults: Callable[[], dict[str, Any]]
    base: dict[str, Any]
    docs: dict[str, tuple[str, str]]


_PATH = {"rate": "10Mbps", "rtt": "20ms"}
_FLOWS = {"duration": "1s", "path": _PATH, "flow": [{}]}


def _web_defaults() -> dict[str, Any]:
    return {"kind": "bulk", **defaults("web")}


def _cross_defaults() -> dict[str, Any]:
    core = _core_defaults()["cross"]
    out: dict[str, Any] = {}
    for key, (unit, field) in sc.CROSS_FIELDS.items():
        if field in core:
            value = core[field]
            out[key] = time_text(value) if unit == "time" and value is not None else value
    return out


FLOW_DOCS = {
    "cc": ("algorithm", 'algorithm: `"name"`, `"name:key=value,..."` or a table `{name = ...}`'),
    "size": ("size", 'bytes to transfer ("inf": an endless stream)'),
    "start": ("time", "when the flow starts"),
    "mss": ("integer", "payload bytes per segment"),
    "header_bytes": ("integer", "TCP/IP header bytes on the wire per packet"),
    "initcwnd": ("integer", "initial congestion window, segments"),
    "initrwnd": ("integer", "initial receive window, segments"),
    "max_rwnd": ("window", 'receive window ceiling: a size or "Nseg" ("inf": none)'),
    "max_window": ("window", 'send window ceiling: a size or "Nseg" ("inf": none)'),
    "handshake": ("boolean", "one RTT of SYN/SYN-ACK before data"),
    "delayed_ack": ("boolean", "the receiver delays ACKs (RFC 1122)"),
    "delack_timeout": ("time", "the delayed-ACK timer"),
    "ack_every": ("integer", "with delayed ACKs, ACK every N full segments"),
    "quickack": ("boolean", "Linux's quick ACKs at the start and while the window grows"),
    "abc": ("boolean", "byte counting (RFC 3465); false counts per ACK, as ns-2 did"),
    "min_rto": ("time", "retransmission timer floor"),
    "max_rto": ("time", "retransmission timer ceiling"),
    "pacing": ("boolean", "pace sending at the controller's rate"),
    "pacer": (
        "word",
        'with pacing, "linux" (the controller\'s rate, else Linux\'s) or "quinn" (quinn\'s '
        "token bucket at 1.25 cwnd/srtt, whatever the controller's rate)",
    ),
    "recovery": ("word", '"prr" (RFC 6937) or "rfc6675" (the plain pipe rule)'),
    "loss_detection": ("word", '"rack" (RACK-TLP, RFC 8985) or "dupthresh" (RFC 6675 only)'),
    "ecn": ("boolean", "ECN (RFC 3168): data ECN-capable, the window reduced on ECE"),
    "ecn_feedback": (
        "word",
        '"classic" (RFC 3168: ECE until CWR), "dctcp" (RFC 8257: ECE per packet\'s CE state) '
        'or "accurate" (RFC 9768: the ACE count of CE packets)',
    ),
    "receiver_ecn": (
        "word",
        'the receiver\'s ECN, settled at the handshake (RFC 9768 §3.1.1): "same" (gives what '
        'the sender asks), "accurate" (AccECN, else RFC 3168), "classic" (RFC 3168) or "none"',
    ),
    "ecn_reduction": (
        "word",
        'how an ECN echo lowers the window: "immediate" (cwnd to ssthresh at once) or "prr" '
        "(PRR, RFC 6937, paces it down as Linux's CWR state does: tcp_input.c "
        "`tcp_cwnd_reduction`)",
    ),
    "cwnd_limited": ("word", 'when slow start grows a held-back cwnd: "linux" or "strict"'),
    "src": ("node", "the sending node (required in the general form)"),
    "dst": ("node", "the receiving node (required in the general form)"),
    "app": ("table", 'what runs on the connection: "bulk", or a web or bittorrent table'),
    "program": ("table", "a real program pair that carries the flow in `slowstart real`"),
}

_DIRECTION_DOCS = {
    "loss": ("probability", "random loss (forward), or a Gilbert-Elliott table `{p, r, ...}`"),
    "jitter": ("time", "extra delay per packet in [0, jitter] (forward), never reordering"),
    "drop": ("list", "deterministic drops (forward): `[{flow = 0, seq = 50}]`"),
    "queue": (
        "word",
        'discipline: "droptail", "codel", "fq_codel", "pie", "red", "dualpi2", or a table',
    ),
    "reverse_queue": ("word", "the reverse direction's discipline (default: queue)"),
    "ecn": ("boolean", "the queue marks ECN-capable packets instead of dropping them"),
}

TABLES: tuple[Table, ...] = (
    Table(
        "Top level",
        "",
        ("name", "description", "duration", "seed"),
        lambda: {},
        _FLOWS,
        {
            "name": ("text", "the scenario's name (default: the file name)"),
            "description": ("text", "one line shown by `slowstart list`"),
            "duration": ("time", "simulated time (required)"),
            "seed": ("integer", "drives random loss, jitter and every random draw (default 0)"),
        },
    ),
    Table(
        "[path]: one sender, one bottleneck, one receiver",
        "path",
        sc.PATH_KEYS,
        lambda: defaults("path"),
        _FLOWS,
        {
            "rate": ("rate", "bottleneck rate, forward (required), or `{trace = FILE}`"),
            "rtt": ("time", "base round-trip propagation delay, rtt/2 each way (required)"),
            "buffer": ("buffer", "bottleneck buffer, both directions unless reverse_buffer"),
            "access_rate": ("rate", "the sender's own link, both ways"),
            "reverse_rate": ("rate", "bottleneck rate for ACKs (default: rate)"),
            "reverse_buffer": ("buffer", "the reverse direction's buffer (default: buffer)"),
            **_DIRECTION_DOCS,
        },
    ),
    Table(
        "[[link]]: the general form",
        "link.0",
        sc.LINK_KEYS,
        lambda: {},
        {
            "duration": "1s",
            "nodes": ["a", "b"],
            "link": [{"a": "a", "b": "b", "rate": "10Mbps", "delay": "5ms", "buffer": "10pkt"}],
            "flow": [{"src": "a", "dst": "b"}],
        },
        {
            "name": ("text", 'the link\'s name (default "a-b" from its ends)'),
            "a": ("node", "one end; forward is a to b (required)"),
            "b": ("node", "the other end (required)"),
            "rate": ("rate", "line rate, forward (required), or `{trace = FILE}`"),
            "delay": ("time", "one-way propagation delay (required)"),
            "buffer": ("buffer", "buffer: packets, bytes or a time at the line rate (required)"),
            "reverse_rate": ("rate", "the reverse direction's rate (default: rate)"),
            "reverse_delay": ("time", "the reverse direction's delay (default: delay)"),
            "reverse_buffer": ("buffer", "the reverse direction's buffer (default: buffer)"),
            **_DIRECTION_DOCS,
        },
    ),
    Table("[[flow]]", "flow.0", sc.FLOW_KEYS, lambda: defaults("flow"), _FLOWS, FLOW_DOCS),
    Table(
        '[flow.app], kind = "web"',
        "app.0",
        apps.KEYS["web"],
        _web_defaults,
        {**_FLOWS, "flow": [{"app": {"kind": "web", "response": "17kB"}}]},
        {
            "kind": ("word", '"bulk", "web" or "bittorrent"'),
            "request": ("size", "bytes of each request"),
            "response": ("size", "the object, or a list of sizes cycled over the fetches"),
            "objects": ("integer", "sequential fetches (default: one per response size)"),
            "keep_alive": ("boolean", "one connection for every object, else one each"),
        },
    ),
    Table(
        '[flow.app], kind = "bittorrent"',
        "app.0",
        apps.KEYS["bittorrent"],
        lambda: {"kind": "bulk", **defaults("bittorrent")},
        {**_FLOWS, "flow": [{"app": {"kind": "bittorrent"}}]},
        {
            "kind": ("word", '"bulk", "web" or "bittorrent"'),
            "block": ("size", "bytes per request"),
            "queue_time": ("time", "target = rate x queue_time / block (libtorrent)"),
            "min_queue": ("integer", "least requests kept outstanding"),
            "max_queue": ("integer", "most requests kept outstanding"),
            "app_slow_start": ("boolean", "libtorrent 1.0.6's request slow start"),
            "slow_start_threshold": ("size", "growth per second below which it ends"),
            "blocks": ("integer", "blocks to download (default: until the end)"),
        },
    ),
    Table(
        "[flow.program]: a real program pair (slowstart real only)",
        "flow.0.program",
        apps.PROGRAM_KEYS,
        lambda: defaults("program"),
        {**_FLOWS, "flow": [{"program": {"server": "srv", "client": "cli"}}]},
        {
            "server": ("text", "command started first (a string split as by a shell, or a list)"),
            "client": ("text", "command started at the flow's start; its exit ends the flow"),
            "sends": ("word", '"server" (a download) or "client" (an upload): runs in ss-snd'),
            "port": ("integer", "the server's port (default: 5001 + the flow's index)"),
            "ends": ("word", '"client": its exit ends the flow; "both": the server exits too'),
        },
    ),
    Table(
        "[[cross]]: traffic without congestion control",
        "cross.0",
        tuple(sc.CROSS_FIELDS),
        _cross_defaults,
        {**_FLOWS, "cross": [{"rate": "1Mbps", "kind": "onoff"}]},
        {
            "kind": ("word", '"cbr" (always on) or "onoff" (on and off periods)'),
            "src": ("node", "the sending node"),
            "dst": ("node", "the receiving node"),
            "rate": ("rate", "the rate while on, every byte of the packet counted (required)"),
            "packet_size": ("size", "bytes on the wire per packet"),
            "start": ("time", "when it starts"),
            "stop": ("time", "when it stops (default: the end of the run)"),
            "on": ("time", "onoff: (mean) on period (left out: ns-2's Exponential default)"),
            "off": ("time", "onoff: (mean) off period (left out: ns-2's Exponential default)"),
            "distribution": ("word", 'onoff: "exponential" or "fixed" periods'),
        },
    ),
    Table(
        "[trace]",
        "trace",
        sc.TRACE_KEYS,
        lambda: defaults("trace"),
        _FLOWS,
        {
            "flow_interval": ("time", "sample each flow at most this often (0: every ACK)"),
            "queue_interval": ("time", "sample each queue at most this often (0: every change)"),
            "max_rows": ("integer", "rows per table; past it, every other row goes"),
        },
    ),
    Table(
        "[swarm]",
        "swarm",
        sc.SWARM_KEYS,
        lambda: defaults("swarm"),
        {"duration": "1s", "swarm": {}},
        {
            "seeds": ("integer", "seeds at t = 0; they never leave"),
            "leechers": ("integer", "leechers arriving with exponential inter-arrival times"),
            "arrival_mean": ("time", "mean inter-arrival time"),
            "file": ("size", "the file"),
            "piece": ("size", "a piece (block <= piece <= file)"),
            "block": ("size", "a block, the request unit"),
            "population": ("word", 'the leechers\' upload transport: "tcp", "utp" or "50-50"'),
            "connection_transport": (
                "word",
                "\"uploader\": each direction its uploader's transport (the paper's); "
                '"connector": both the opener\'s, as a real connection',
            ),
            "seeding": ("word", '"never-leave" or "random-stay" after completing'),
            "stay_factor": ("number", "random-stay: mean stay over the own download time"),
            "stop_after": ("integer", 'end at this many completions ("none": never)'),
            "queue_sample": (
                "time",
                "how often uplink and request queues are sampled (a real swarm's peers too)",
            ),
            "up": ("rate", "every access link's uplink"),
            "down": ("rate", "every access link's downlink"),
            "buffer": ("buffer", "uplink drop-tail buffer"),
            "down_buffer": ("buffer", "downlink buffer"),
            "delay": ("list", "one-way delay of each access link: [min, max] or one time"),
            "bittorrent": ("table", "the BitTorrent protocol's settings, below"),
            "tcp": ("table", "TCP uploads and control connections: [[flow]] keys"),
            "utp": ("table", "uTP uploads: [[flow]] keys"),
        },
    ),
    Table(
        "[swarm.bittorrent]",
        "swarm.bittorrent",
        sc.SWARM_BITTORRENT_KEYS,
        lambda: defaults("swarm.bittorrent"),
        {"duration": "1s", "swarm": {}},
        {
            "tracker_peers": ("integer", "peers a tracker announce returns"),
            "min_peers": ("integer", "below this many, announce again"),
            "max_initiate": ("integer", "connections a peer opens itself"),
            "max_connections": ("integer", "connections a peer keeps"),
            "reannounce": ("time", "tracker re-announce interval"),
            "unchoke_slots": ("integer", "uploads at once, the optimistic one included"),
            "rechoke": ("time", "choke decision interval"),
            "rate_window": ("time", "window of the rates chokes are decided on"),
            "optimistic": ("time", "optimistic unchoke interval"),
            "new_peer_weight": ("integer", "weight of new peers in the optimistic draw"),
            "pipeline": ("integer", "requests outstanding per connection"),
            "request_queue_time": (
                "time",
                "0: always `pipeline` requests; else libtorrent's queue, this long of the "
                "connection's download rate, from `pipeline` (docs/real-swarm.md)",
            ),
            "piece_picker": (
                "word",
                '"module": a started piece first (the paper\'s); "libtorrent": rarest first, '
                "a started piece first only among the equally rare (docs/real-swarm.md)",
            ),
            "whole_pieces_threshold": (
                "time",
                '0: off; else with the "libtorrent" picker, a connection that brings a piece '
                "within this long is asked for whole pieces (libtorrent: 20s)",
            ),
            "hold_requests_beyond_target": (
                "boolean",
                "false: every picked block requested at once; true: beyond the request queue's "
                "target they wait at the downloader, as libtorrent's (docs/real-swarm.md)",
            ),
            "send_buffer": (
                "word",
                '"transport": the next block once the last has left the transport (the '
                'paper\'s); "libtorrent": while the unsent bytes are below the watermark '
                "(docs/real-swarm.md)",
            ),
            "send_buffer_watermark": ("size", "the watermark's upper bound (libtorrent: 500KiB)"),
            "send_buffer_low_watermark": (
                "size",
                "the watermark's lower bound (libtorrent: 10KiB)",
            ),
            "send_buffer_watermark_factor": (
                "integer",
                "the watermark, percent of the payload uploaded in the last second (50)",
            ),
            "messages": (
                "word",
                '"separate": a control stream each way (the model\'s); "with_data": in the '
                "sender's data stream behind its piece data, as on a real connection",
            ),
            "send_not_sent_low_watermark": (
                "size",
                "unsent bytes a TCP socket holds beyond the watermark (libtorrent: 16KiB)",
            ),
            "end_game": ("boolean", "request the last blocks from every peer"),
            "anti_snubbing": ("boolean", "choke peers that send nothing for `snub`"),
            "snub": ("time", "anti-snubbing's timeout"),
            "super_seeding": ("boolean", "not modelled: true is refused"),
        },
    ),
    Table(
        "[swarm.tcp] (and [swarm.utp], whose defaults differ as the next table says)",
        "swarm.tcp",
        sc.SWARM_FLOW_KEYS,
        lambda: defaults("swarm.tcp"),
        {"duration": "1s", "swarm": {}},
        {k: v for k, v in FLOW_DOCS.items() if k in sc.SWARM_FLOW_KEYS},
    ),
)


def _in_unit(value: Any, unit: str) -> Any:
    """A default in bits per second or bytes as a scenario would rather write it."""
    if isinstance(value, int) and not isinstance(value, bool) and value:
        if unit == "rate":
            return rate_text(value)
        if unit == "size":
            return size_text(value)
    return value


def _value(value: Any) -> str:
    """A default as a scenario writes it; none (the key's meaning says what then) is blank."""
    if value is None:
        return ""
    if isinstance(value, dict):
        if set(value) == {"name"}:
            return f'`"{value["name"]}"`'
        inner = ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items())
        return f"`{{{inner}}}`"
    if isinstance(value, str):
        value = spellings().get(value, value)
    return f"`{json.dumps(value)}`"


def _bound(table: Table, key: str, unit: str) -> str:
    at = f"{table.at}.{key}" if table.at else key
    return _probe(lambda huge: (table.base, [f"{at}={json.dumps(huge)}"]), at, unit)


def _probe(scenario: Callable[[Any], tuple[dict[str, Any], list[str]]], at: str, unit: str) -> str:
    """What the core says the value at `at` must be: its message for a huge one, in the
    scenario (and overrides) `scenario(huge)` makes. "" for a unit with no bound or a message
    about another field, "none" when the huge value is taken."""
    huge = UNITS[unit][1]
    if huge is None:
        return ""
    base, overrides = scenario(huge)
    try:
        load(base, set=overrides)
    except ScenarioError as e:
        field, _, said = str(e).partition(": ")
        if field != at:
            return ""
    else:
        return "none"
    if "the run ends" in said:
        return "before the run ends"
    # Bounds that depend on another value name it; the value they found is left out.
    said = re.sub(r" \([^)]*\)", "", said.rpartition(", got")[0])
    lo_hi = re.fullmatch(r"must be in (\d+)\.\.=(\d+)(.*)", said)
    if not lo_hi:
        return said.removeprefix("must be ")
    lo, hi, rest = int(lo_hi[1]), int(lo_hi[2]), lo_hi[3]
    if unit == "time":
        # A time bounded by the run's duration (the base scenarios' 1 s) says so.
        end = "before the run ends" if hi == 10**9 - 1 else time_text(hi)
        return f"{time_text(lo)} to {end}"
    if unit == "rate":
        return f"{rate_text(lo)} to {rate_text(hi)}"
    rest = rest or {"size": " bytes", "buffer": " packets"}.get(unit, "")
    return f"{lo:,} to {hi:,}{rest}".replace(",", " ")


def _check(table: Table) -> None:
    documented, taken = set(table.docs), set(table.keys)
    if documented != taken:
        raise ValueError(
            f"{table.title}: keys without a meaning {sorted(taken - documented)}, "
            f"meanings of keys the loader does not take {sorted(documented - taken)} "
            "(python/slowstart/loading/reference.py)"
        )


def scenario_keys() -> str:
    """Every table of a scenario: per key its unit, default, bound and meaning."""
    out = []
    for table in TABLES:
        _check(table)
        given = table.defaults()
        rows = ["| key | unit | default | bound | meaning |", "| --- | --- | --- | --- | --- |"]
        for key in table.keys:
            unit, meaning = table.docs[key]
            default = _value(_in_unit(given[key], unit)) if key in given else ""
            rows.append(
                f"| `{key}` | {unit} | {default} | {_bound(table, key, unit)} | {meaning} |"
            )
        out += [f"## {table.title}", "", *rows, ""]
    out += ["## [swarm.utp]: where the transports differ from a flow", "", swarm_transports()]
    return "\n".join(out)


def swarm_transports() -> str:
    """The keys whose defaults differ between `[swarm.tcp]`, `[swarm.utp]` and a `[[flow]]`."""
    tcp, utp, flow = defaults("swarm.tcp"), defaults("swarm.utp"), defaults("flow")
    units = {k: unit for k, (unit, _) in FLOW_DOCS.items()}
    rows = ["| key | `[swarm.tcp]` | `[swarm.utp]` | a `[[flow]]`'s |", "| --- | --- | --- | --- |"]
    for key in sc.SWARM_FLOW_KEYS:
        values = [_value(_in_unit(d[key], units[key])) for d in (tcp, utp, flow)]
        if len(set(values)) > 1:
            rows.append(f"| `{key}` | " + " | ".join(values) + " |")
    return "\n".join(rows) + "\n"


def _algorithms() -> list[dict[str, Any]]:
    return json.loads(_core.algorithms())


def algorithms() -> str:
    """Every registered algorithm: summary, source, and its parameters; the slow-start rules'
    parameters, which every loss-based algorithm takes, once at the end."""
    found = _algorithms()
    with_rule = [a for a in found if a["slow_start"]]
    shared = set.intersection(*({p["name"] for p in a["params"]} for a in with_rule))
    out = []
    for a in found:
        out += [f"## `{a['name']}`", "", f"{a['summary']}.", "", f"Source: {a['source']}.", ""]
        if a["slow_start"]:
            rule = f"`{a['slow_start']}`"
            out += [f"Slow start: {rule} by default (see [the rules](#slow-start-rules)).", ""]
        out += _params([p for p in a["params"] if p["name"] not in shared]) or ["No parameters."]
        out.append("")
    rules = [p for p in with_rule[0]["params"] if p["name"] in shared]
    out += ["## Slow-start rules", "", "Every algorithm above with a slow-start rule takes these."]
    out += ["", *_params(rules), ""]
    return "\n".join(out)


def _params(params: list[dict[str, Any]]) -> list[str]:
    """A table of parameters: name, default, accepted values, meaning ([] for none)."""
    if not params:
        return []
    return [
        "| parameter | default | accepted | meaning |",
        "| --- | --- | --- | --- |",
        *(
            f"| `{p['name']}` | `{p['default']}` | {_cell(p['accepted'])} | {_cell(p['doc'])} |"
            for p in params
        ),
    ]


# One line on each discipline; the parameters and their defaults are the core's.
QUEUE_DOCS = {
    "droptail": "first in, first out; arrivals to a full buffer are dropped (the default)",
    "codel": "CoDel (RFC 8289): drops at dequeue once the sojourn time stays above target",
    "fq_codel": "FQ-CoDel (RFC 8290): CoDel per flow queue, served by deficit round robin",
    "pie": "PIE (RFC 8033): drops at enqueue with a probability steered by queue delay",
    "red": "RED (Floyd and Jacobson 1993) with gentle (Floyd 2000), on the average queue",
    "dualpi2": "DualPI2 (RFC 9332): an L queue for ECT(1) and CE beside a classic one, coupled",
}


def queues() -> str:
    """Every queue discipline with its parameters, defaults and bounds."""
    core = _core_defaults()["queue"]
    kinds = ["droptail", *core]
    if set(kinds) != set(QUEUE_DOCS):
        raise ValueError(f"queue disciplines {kinds} against the documented {list(QUEUE_DOCS)}")
    out = []
    for kind in kinds:
        out += [f"## `{kind}`", "", f"{QUEUE_DOCS[kind]}.", ""]
        if kind == "droptail":
            out += ["No parameters.", ""]
            continue
        out += ["| parameter | default | bound |", "| --- | --- | --- |"]
        for key, value in defaults(f"queue.{kind}").items():
            made = functools.partial(_queued, kind, key)
            bound = _probe(made, f"path.queue.{key}", _unit_of(value))
            out.append(f"| `{key}` | {_value(value)} | {bound} |")
        out.append("")
    return "\n".join(out)


def _queued(kind: str, key: str, value: Any) -> tuple[dict[str, Any], list[str]]:
    return {**_FLOWS, "path": {**_PATH, "queue": {"kind": kind, key: value}}}, []


def _unit_of(value: Any) -> str:
    """The unit of a discipline's parameter, from its default as a scenario writes it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "time" if value.endswith("s") else "size"
    return "number" if isinstance(value, float) else "integer"


def _cell(text: str) -> str:
    """Text in a Markdown table cell: its pipes escaped."""
    return text.replace("|", "\\|")


def program_placeholders() -> str:
    """The `{name}`s a program's arguments may hold and what each is replaced by."""
    rows = ["| placeholder | replaced by |", "| --- | --- |"]
    for name, meaning in _core_defaults()["program_placeholders"].items():
        rows.append(f"| `{{{name}}}` | {meaning} |")
    return "\n".join(rows) + "\n"


GENERATED: dict[str, Callable[[], str]] = {
    "scenario-keys": scenario_keys,
    "program-placeholders": program_placeholders,
    "algorithms": algorithms,
    "queues": queues,
    "swarm-transports": swarm_transports,
}
