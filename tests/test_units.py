import pytest

from slowstart.units import (
    ScenarioError,
    parse_loss,
    parse_rate,
    parse_size,
    parse_size_or_inf,
    parse_time,
    parse_window,
    queue_limit,
)


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("250Mbps", 250_000_000),
        ("10Gbps", 10_000_000_000),
        ("3kbps", 3_000),
        ("1.5Mbps", 1_500_000),
        ("2.5 Gbps", 2_500_000_000),
        ("1000bps", 1_000),
        ("2.5e6bps", 2_500_000),
        ("1e9bps", 1_000_000_000),
    ],
)
def test_rates_are_exact_bits_per_second(text, bps):
    assert parse_rate(text, "path.rate") == bps


def test_a_zero_rate_is_left_to_the_core():
    """Units only: the core refuses a zero link or source rate, naming its range."""
    assert parse_rate("0Mbps", "path.rate") == 0


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("600ms", 600_000_000),
        ("1s", 1_000_000_000),
        ("50us", 50_000),
        ("2.5s", 2_500_000_000),
        ("1min", 60_000_000_000),
        ("0.1s", 100_000_000),
        ("0.08s", 80_000_000),
        ("7ns", 7),
        (0, 0),
    ],
)
def test_times_are_exact_nanoseconds(text, ns):
    assert parse_time(text, "path.rtt") == ns


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("100MB", 100_000_000),
        ("17kB", 17_000),
        ("64KiB", 65_536),
        ("1MiB", 1_048_576),
        ("1.5MB", 1_500_000),
        ("2GB", 2_000_000_000),
        ("1460B", 1460),
        ("1460 B", 1460),
    ],
)
def test_sizes_are_exact_bytes(text, size):
    assert parse_size(text, "flow.0.size") == size


@pytest.mark.parametrize(
    ("parse", "field", "value", "message"),
    [
        (
            parse_time,
            "path.rtt",
            600,
            'path.rtt: give a unit, e.g. "600ms" (ns, us, ms, s, min, h), got 600',
        ),
        (
            parse_time,
            "path.rtt",
            "0.6",
            'path.rtt: give a unit, e.g. "0.6ms" (ns, us, ms, s, min, h), got "0.6"',
        ),
        (
            parse_rate,
            "path.rate",
            250,
            'path.rate: give a unit, e.g. "250Mbps" (bps, kbps, Mbps, Gbps, Tbps), got 250',
        ),
        (
            parse_size,
            "flow.0.size",
            1000,
            'flow.0.size: give a unit, e.g. "1000B" (B, kB, MB, GB, KiB, MiB, GiB), got 1000',
        ),
        (
            lambda v, f: parse_window(v, f, 1460),
            "flow.0.max_rwnd",
            100,
            'flow.0.max_rwnd: give a unit, e.g. "100seg"',
        ),
        (
            lambda v, f: queue_limit(v, f, 1),
            "path.buffer",
            100,
            'path.buffer: give a unit, e.g. "100pkt"',
        ),
    ],
)
def test_a_bare_number_is_refused_with_the_forms_it_could_take(parse, field, value, message):
    """600 meant as ms would run as 600 s (#40): no unit is guessed, and the one line says
    which are accepted."""
    with pytest.raises(ScenarioError) as err:
        parse(value, field)
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("parse", [parse_time, parse_rate, parse_size])
def test_zero_needs_no_unit(parse):
    assert parse(0, "x") == 0 and parse("0", "x") == 0


def test_inf_size_is_none():
    assert parse_size_or_inf("inf", "flow.0.size") is None
    assert parse_size_or_inf("1kB", "flow.0.size") == 1000


@pytest.mark.parametrize(
    ("text", "mss", "window"),
    [
        ("3500seg", 1460, 5_110_000),
        ("10seg", 8960, 89_600),
        ("5110000B", 1460, 5_110_000),
        ("64KiB", 1460, 65_536),
        ("inf", 1460, None),
        ("0seg", 1460, 0),  # under one MSS: the core's to refuse
    ],
)
def test_windows_in_segments_or_bytes(text, mss, window):
    assert parse_window(text, "flow.0.max_window", mss) == window


RATE_250M = 250_000_000
SATELLITE = (RATE_250M, 600_000_000)  # [path]'s rate and rtt: a BDP of 18.75 MB


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("200pkt", {"packets": 200}),
        ("1MB", {"bytes": 1_000_000}),
        ("50000B", {"bytes": 50_000}),
        ("50ms", {"bytes": 1_562_500}),
        ("1bdp", {"bytes": 18_750_000}),
        ("0.5bdp", {"bytes": 9_375_000}),
        ("2bdp", {"bytes": 37_500_000}),
    ],
)
def test_buffers_resolve_to_a_queue_limit(text, limit):
    assert queue_limit(text, "path.buffer", RATE_250M, SATELLITE) == limit


def test_bdp_buffer_outside_path_form_says_so():
    with pytest.raises(ScenarioError, match=r"^link\.0\.buffer: .*only accepted in the \[path\]"):
        queue_limit("1bdp", "link.0.buffer", RATE_250M)


def test_loss_as_probability_or_percent():
    assert parse_loss(0.01, "path.loss") == 0.01
    assert parse_loss("0.1%", "path.loss") == pytest.approx(0.001)
    assert parse_loss(0, "path.loss") == 0.0
    # Its range, [0, 1), is the core's (config.rs); any finite number passes here.
    assert parse_loss(1.5, "path.loss") == 1.5


@pytest.mark.parametrize(
    ("parse", "value", "message"),
    [
        (parse_rate, "fast", r'^path\.x: expected a rate such as "250Mbps".*got "fast"$'),
        (parse_rate, "5MBps", r'got "5MBps"$'),
        (parse_rate, "-5Mbps", r'^path\.x: must not be negative, got "-5Mbps"$'),
        (parse_rate, "1.5bps", r"not a whole number of bits per second"),
        (parse_rate, True, r"got true$"),
        (parse_rate, None, r"got None$"),
        (parse_time, "1.5ns", r"not a whole number of nanoseconds"),
        (parse_time, "10 parsecs", r"expected a time such as"),
        (parse_time, "-1s", r"must not be negative"),
        (parse_time, float("nan"), r"expected a time"),
        (parse_size, "1.5B", r"not a whole number of bytes"),
        (parse_size, "12 bananas", r"expected a size"),
        (parse_size, "1e30B", r"too large"),
        (parse_size, [1], r"got a list$"),
        (parse_loss, float("nan"), r"expected a loss probability in \[0, 1\)"),
        (parse_loss, "inf%", r"expected a loss probability"),
        (parse_loss, "5 percent", r"expected a loss probability"),
    ],
)
def test_bad_values_name_the_field_and_what_is_accepted(parse, value, message):
    with pytest.raises(ScenarioError, match=message) as err:
        parse(value, "path.x")
    assert str(err.value).startswith("path.x: ")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("value", ["10 pkts", "12 bananas", "-3seg", 1.5])
def test_bad_windows(value):
    with pytest.raises(ScenarioError, match=r"^flow\.0\.max_window: "):
        parse_window(value, "flow.0.max_window", 1460)


@pytest.mark.parametrize("value", ["10 apples", "-1pkt", "1.5pkt"])
def test_bad_buffers(value):
    with pytest.raises(ScenarioError, match=r"^path\.buffer: "):
        queue_limit(value, "path.buffer", RATE_250M, SATELLITE)


def test_an_empty_buffer_is_left_to_the_core_but_for_a_bdp_multiple():
    """The core refuses a buffer that holds no packet (config.rs); only a BDP multiple that
    rounds to nothing is the loader's to explain, as only it knows the BDP."""
    for text, limit in [("0pkt", {"packets": 0}), ("0", {"bytes": 0}), ("0bdp", {"bytes": 0})]:
        assert queue_limit(text, "path.buffer", RATE_250M, SATELLITE) == limit
    assert queue_limit("1bdp", "path.buffer", 0, (0, 600_000_000)) == {"bytes": 0}
    # 8 bit/s for 1 ms: a thousandth of a byte.
    with pytest.raises(ScenarioError, match=r'^path\.buffer: "1bdp" of a 0\.001-byte BDP'):
        queue_limit("1bdp", "path.buffer", 8, (8, 1_000_000))
