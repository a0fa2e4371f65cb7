"""The network of a scenario: the `[path]` shorthand (sender, access link, router, bottleneck,
receiver) or `nodes` and `[[link]]` tables → the canonical nodes and links; and a core message
about a link's canonical field named back as the scenario wrote it."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from slowstart.loading.defaults import (
    defaults,
    fallback,
    key_table,
    keys,
)
from slowstart.loading.queues import (
    Trace,
    parameter_key,
    parse_gilbert_elliott,
    parse_queue,
    parse_rate_or_trace,
)
from slowstart.loading.tables import check_table, field_at, parse_str, require
from slowstart.units import (
    ScenarioError,
    parse_bool,
    parse_buffer,
    parse_int,
    parse_loss,
    parse_rate,
    parse_time,
    resolve_buffer,
    show,
)

PATH_NODES = ["sender", "router", "receiver"]


def _direction(
    rate_bps: int,
    delay_ns: int,
    queue: dict[str, int],
    loss: float = 0.0,
    jitter_ns: int = 0,
    drops: list[dict[str, int]] | None = None,
    discipline: dict[str, Any] | None = None,
    ecn: bool = False,
    gilbert_elliott: dict[str, float] | None = None,
    trace: Trace | None = None,
) -> dict[str, Any]:
    d = {
        "rate_bps": rate_bps,
        "delay_ns": delay_ns,
        "queue": queue,
        "loss": loss,
        "jitter_ns": jitter_ns,
        "drops": drops or [],
    }
    if gilbert_elliott is not None:
        d["gilbert_elliott"] = gilbert_elliott
    if trace is not None:
        d["rate_trace_ms"] = trace.times
    # Written only when used, so drop-tail scenarios keep their canonical form.
    if discipline is not None:
        d["discipline"] = discipline
    if ecn:
        d["ecn"] = True
    return d


def _loss(value: object, field: str) -> dict[str, Any]:
    """`loss = 0.01` (independent) or `loss = {p = ..., r = ...}` (Gilbert-Elliott)."""
    if isinstance(value, dict):
        return {"gilbert_elliott": parse_gilbert_elliott(value, field)}
    return {"loss": parse_loss(value, field)}


def _queues(
    table: dict[str, Any], at: str
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, bool]:
    """(forward discipline, reverse discipline, ecn) of a `[path]` or `[[link]]` table; the
    reverse direction runs the forward's discipline unless `reverse_queue` says otherwise."""
    forward = parse_queue(table.get("queue", "droptail"), f"{at}.queue")
    reverse = (
        parse_queue(table["reverse_queue"], f"{at}.reverse_queue")
        if "reverse_queue" in table
        else forward
    )
    ecn = parse_bool(table.get("ecn", False), f"{at}.ecn")
    return forward, reverse, ecn


def _drops(value: object, field: str) -> list[dict[str, int]]:
    """Scheduled drops; which flows and segments exist is the core's to check."""
    if not isinstance(value, list):
        raise ScenarioError(f"{field}: expected a list of {{flow = N, seq = N}}, got {show(value)}")
    drops = []
    for j, item in enumerate(value):
        at = field_at(field, j)
        check_table(item, at, keys("drop"))
        flow = parse_int(require(item, at, "flow", "a flow index"), f"{at}.flow")
        seq = require(item, at, "seq", "a data segment number")
        drops.append({"flow": flow, "seq": parse_int(seq, f"{at}.seq", "a positive integer")})
    return drops


def queue_limit(value: object, field: str, rate_bps: int, bdp: Fraction | None) -> dict[str, int]:
    return resolve_buffer(parse_buffer(value, field), field, value, rate_bps, bdp)


def expand_path(path: object) -> tuple[list[str], list[dict[str, Any]]]:
    """`[path]` → sender —access— router —bottleneck— receiver."""
    p = {**defaults("path"), **check_table(path, "path", keys("path"))}
    rate, trace = parse_rate_or_trace(
        require(p, "path", "rate", 'a rate such as "250Mbps"'), "path.rate"
    )
    rtt = parse_time(require(p, "path", "rtt", 'a time such as "80ms"'), "path.rtt")
    if rtt == 0:  # the core sees only the two one-way delays, and 0 is a valid delay
        raise ScenarioError("path.rtt: must be positive, got 0")
    bdp = Fraction(rate * rtt, 8 * 10**9)
    reverse_rate, reverse_trace = parse_rate_or_trace(*fallback("path", p, "reverse_rate", "path"))
    forward_queue = queue_limit(p["buffer"], "path.buffer", rate, bdp)
    reverse_buffer, reverse_field = fallback("path", p, "reverse_buffer", "path")
    reverse_queue = queue_limit(reverse_buffer, reverse_field, reverse_rate, bdp)
    access_rate = parse_rate(p["access_rate"], "path.access_rate")
    access_queue = defaults("path_access_queue")
    discipline, reverse_discipline, ecn = _queues(p, "path")
    forward = _direction(
        rate,
        rtt // 2,
        forward_queue,
        **_loss(p["loss"], "path.loss"),
        jitter_ns=parse_time(p["jitter"], "path.jitter"),
        drops=_drops(p.get("drop", []), "path.drop"),
        discipline=discipline,
        ecn=ecn,
        trace=trace,
    )
    links = [
        {
            "name": "access",
            "a": "sender",
            "b": "router",
            "forward": _direction(access_rate, 0, access_queue),
            "reverse": _direction(access_rate, 0, dict(access_queue)),
        },
        {
            "name": "bottleneck",
            "a": "router",
            "b": "receiver",
            "forward": forward,
            "reverse": _direction(
                reverse_rate,
                rtt - rtt // 2,
                reverse_queue,
                discipline=reverse_discipline,
                ecn=ecn,
                trace=reverse_trace,
            ),
        },
    ]
    return list(PATH_NODES), links


def _nodes(value: object) -> list[str]:
    if not isinstance(value, list) or not value:
        raise ScenarioError(
            f'nodes: expected a list of node names such as ["a", "b"], got {show(value)}'
        )
    nodes: dict[str, None] = {}  # ordered, and a set: a long list is checked in linear time
    for i, name in enumerate(value):
        name = parse_str(name, f"nodes.{i}")
        if name in nodes:
            raise ScenarioError(f"nodes.{i}: {show(name)} is listed twice")
        nodes[name] = None
    if len(nodes) < 2:
        raise ScenarioError("nodes: at least two nodes are needed")
    return list(nodes)


def node_list(nodes: list[str]) -> str:
    """Node names for a message: the first few of many."""
    more = len(nodes) - 8
    return ", ".join(nodes[:8]) + (f", and {more} more" if more > 0 else "")


def node_ref(value: object, field: str, nodes: list[str], known: set[str]) -> str:
    if not isinstance(value, str) or value not in known:
        raise ScenarioError(f"{field}: unknown node {show(value)} (nodes: {node_list(nodes)})")
    return value


def expand_links(raw: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """The general form: `nodes = [...]` and `[[link]]` tables."""
    nodes = _nodes(require(raw, "", "nodes", "a list of node names"))
    items = require(raw, "", "link", "[[link]] tables")
    if not isinstance(items, list) or not items:
        raise ScenarioError(f"link: expected one or more [[link]] tables, got {show(items)}")
    links = []
    known, names = set(nodes), set()
    for i, item in enumerate(items):
        at = f"link.{i}"
        check_table(item, at, keys("link"))
        a = node_ref(require(item, at, "a", "a node name"), f"{at}.a", nodes, known)
        b = node_ref(require(item, at, "b", "a node name"), f"{at}.b", nodes, known)
        if a == b:
            raise ScenarioError(f"{at}.b: a link needs two different nodes, got {show(b)} twice")
        name = parse_str(item.get("name", f"{a}-{b}"), f"{at}.name")
        if name in names:
            raise ScenarioError(f"{at}.name: {show(name)} is used by another link")
        names.add(name)
        rate, trace = parse_rate_or_trace(
            require(item, at, "rate", 'a rate such as "1Gbps"'), f"{at}.rate"
        )
        delay = parse_time(
            require(item, at, "delay", 'a one-way delay such as "10ms"'), f"{at}.delay"
        )
        buffer = require(item, at, "buffer", 'a buffer such as "200pkt", "1MB" or "50ms"')
        reverse_rate, reverse_trace = parse_rate_or_trace(
            *fallback("link", item, "reverse_rate", at)
        )
        reverse_delay = parse_time(*fallback("link", item, "reverse_delay", at))
        reverse_buffer, reverse_field = fallback("link", item, "reverse_buffer", at)
        discipline, reverse_discipline, ecn = _queues(item, at)
        links.append(
            {
                "name": name,
                "a": a,
                "b": b,
                "forward": _direction(
                    rate,
                    delay,
                    queue_limit(buffer, f"{at}.buffer", rate, None),
                    **_loss(item.get("loss", 0), f"{at}.loss"),
                    jitter_ns=parse_time(item.get("jitter", 0), f"{at}.jitter"),
                    drops=_drops(item.get("drop", []), f"{at}.drop"),
                    discipline=discipline,
                    ecn=ecn,
                    trace=trace,
                ),
                "reverse": _direction(
                    reverse_rate,
                    reverse_delay,
                    queue_limit(reverse_buffer, reverse_field, reverse_rate, None),
                    discipline=reverse_discipline,
                    ecn=ecn,
                    trace=reverse_trace,
                ),
            }
        )
    return nodes, links


_LINK_FIELD = re.compile(r"links\.(\d+)\.(.+)")


def scenario_field(message: str, path: bool) -> str:
    """The core's message with a link's canonical field named as the scenario wrote it: the
    core says `links.1.forward.queue`, a `[path]` scenario `path.buffer`, the general form
    `link.1.buffer`, the key that fills the field (crates/slowstart-config/src/keys.rs)."""
    field, colon, why = message.partition(": ")
    m = _LINK_FIELD.fullmatch(field)
    if not colon or m is None:
        return message
    index, below = m.groups()
    table, at, canonical = ("path", "path", field) if path else ("link", f"link.{index}", below)
    for key, k in key_table(table).items():
        for name, part in k.fields:
            rest = canonical.removeprefix(name)
            if rest != canonical and (not rest or rest.startswith(".")):
                if k.unit == "queue" and rest:  # a discipline's parameter, as the scenario names it
                    name, dot, deeper = rest[1:].partition(".")
                    rest = f".{parameter_key(name)}{dot}{deeper}"
                return f"{at}.{key}{'.' + part if part else ''}{rest}: {why}"
    return message
