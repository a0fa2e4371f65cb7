"""The loader under random scenarios (issue #15): every document either loads into a config
the core accepts, or fails with one ScenarioError (or the core's ValueError) naming a field;
never an exception of another kind."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slowstart import _core
from slowstart.loading.scenario import (
    FLOW_KEYS,
    PATH_KEYS,
    SWARM_KEYS,
    TRACE_KEYS,
    build_config,
)
from slowstart.units import ScenarioError

# Values a person might write, right or wrong: units, odd numbers, other types.
WORDS = st.sampled_from(
    [
        "10ms", "1s", "0s", "-1s", "250Mbps", "0bps", "1bdp", "200pkt", "1MB", "inf", "nan",
        "reno", "cubic:beta=0.7", "cubic:beta=nan", "reno:", "lss", "bulk", "abc", "", "５s",
        "3500seg", "1e18bdp", "0.1%", "fast", "tcp", "utp", "50-50", "never-leave", "none",
    ]
)  # fmt: skip
NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2, 1460, 2**64 - 1, 2**64, -1, 0.5, 1e300]),
)
SCALARS = st.one_of(WORDS, NUMBERS, st.booleans(), st.text(max_size=8))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def table(keys: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    """Mostly known keys with random values, now and then an unknown key."""
    known = st.dictionaries(st.sampled_from(keys), VALUES, max_size=len(keys))
    return st.one_of(known, st.dictionaries(st.text(max_size=6), VALUES, max_size=2))


GOOD_PATH = {"rate": "10Mbps", "rtt": "20ms"}
SCENARIOS = st.fixed_dictionaries(
    {"duration": st.one_of(st.just("2s"), VALUES)},
    optional={
        "seed": VALUES,
        "path": st.one_of(st.just(GOOD_PATH), table(PATH_KEYS)),
        "flow": st.lists(table(FLOW_KEYS), min_size=0, max_size=3),
        "trace": table(TRACE_KEYS),
        "swarm": table(SWARM_KEYS),
        "nodes": VALUES,
        "link": VALUES,
        "name": VALUES,
        "extra": VALUES,
    },
)


def _finite(x: Any) -> bool:
    """The canonical config holds no NaN or infinity (JSON has none)."""
    if isinstance(x, float):
        return math.isfinite(x)
    if isinstance(x, dict):
        return all(_finite(v) for v in x.values())
    if isinstance(x, list):
        return all(_finite(v) for v in x)
    return True


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCENARIOS)
def test_random_scenarios_load_or_fail_cleanly(raw: dict[str, Any]) -> None:
    try:
        config = build_config(raw)
    except ScenarioError as e:
        assert str(e).strip() and "\n" not in str(e)
        return
    assert _finite(config)
    try:
        _core.validate(json.dumps(config, allow_nan=False))
    except ValueError as e:
        assert str(e).strip()
