"""End to end through the Rust core: summary, frames, determinism, plots."""

import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import slowstart
from conftest import ROOT
from slowstart.plot import phase_spans

SATELLITE = ROOT / "scenarios" / "satellite.toml"
FLOW_KEYS = {
    "id",
    "cc",
    "bytes_delivered",
    "completion_s",
    "goodput_bps",
    "slow_start_exit_s",
    "time_to_full_bw_s",
    "time_to_window_cap_s",
    "retransmits",
    "loss_events",
    "rto_count",
    "max_cwnd_bytes",
}
LINK_KEYS = {"name", "drops", "max_queue_bytes", "mean_queue_delay_s"}


@pytest.fixture(scope="module")
def satellite() -> slowstart.Result:
    return slowstart.run(SATELLITE, cc="reno")


def test_summary_has_the_contract_keys(satellite):
    s = satellite.summary
    assert {"scenario", "seed", "sim_time_s", "events", "wall_s", "flows", "links"} <= set(s)
    assert s["scenario"] == "satellite" and s["seed"] == 1
    (flow,) = s["flows"]
    assert set(flow) >= FLOW_KEYS
    assert [link["name"] for link in s["links"]][:1] == ["access"]
    for link in s["links"]:
        assert set(link) >= LINK_KEYS


def test_satellite_transfer_completes(satellite):
    (flow,) = satellite.summary["flows"]
    assert flow["bytes_delivered"] == 100_000_000
    assert 0 < flow["completion_s"] < 60
    # 100 MB cannot arrive faster than 250 Mbps allows, plus one RTT.
    assert flow["completion_s"] > 100e6 * 8 / 250e6 + 0.6


def test_flows_frame(satellite):
    f = satellite.flows
    assert list(f.columns) == [
        "t_s",
        "flow",
        "cwnd_bytes",
        "ssthresh_bytes",
        "inflight_bytes",
        "srtt_s",
        "delivered_bytes",
        "phase",
    ]
    assert isinstance(f["phase"].dtype, pd.CategoricalDtype)
    assert list(f["phase"].cat.categories) == satellite.phase_names
    assert f["phase"].iloc[0] == "slow_start"
    assert f["t_s"].is_monotonic_increasing
    assert f["delivered_bytes"].is_monotonic_increasing
    assert f["delivered_bytes"].iloc[-1] == 100_000_000
    # ssthresh is unset (NaN) until the first loss, then a byte count.
    assert math.isnan(f["ssthresh_bytes"].iloc[0])
    assert f["ssthresh_bytes"].notna().any()
    # Sampled every 1 ms at most, except that a phase change is always recorded.
    gaps = np.diff(f["t_s"].to_numpy())
    same_phase = f["phase"].to_numpy()[1:] == f["phase"].to_numpy()[:-1]
    assert gaps[same_phase].min() >= 0.001 - 1e-9
    # The 1 ms samples may step over the exact peak, never above it.
    peak = satellite.summary["flows"][0]["max_cwnd_bytes"]
    assert 0.99 * peak <= f["cwnd_bytes"].max() <= peak


def test_queues_frame(satellite):
    q = satellite.queues
    assert list(q.columns) == ["t_s", "link", "queue_bytes", "queue_packets"]
    names = [link["name"] for link in satellite.summary["links"]]
    assert list(q["link"].cat.categories) == names
    sampled_max = q[q["link"] == "bottleneck"]["queue_bytes"].max()
    true_max = satellite.summary["links"][names.index("bottleneck")]["max_queue_bytes"]
    # Sampled every 1 ms: within what 250 Mbps drains in 1 ms (31 250 bytes) of the true peak.
    assert true_max - 31_250 <= sampled_max <= true_max


def test_runs_are_deterministic(satellite):
    again = slowstart.run(SATELLITE, cc="reno")
    a = {k: v for k, v in satellite.summary.items() if k != "wall_s"}
    b = {k: v for k, v in again.summary.items() if k != "wall_s"}
    assert a == b
    pd.testing.assert_frame_equal(satellite.flows, again.flows)
    pd.testing.assert_frame_equal(satellite.queues, again.queues)


def test_overrides_reach_the_core():
    r = slowstart.run(SATELLITE, set=["flow.0.initcwnd=20"], seed=5, duration="2s")
    assert r.summary["seed"] == 5
    assert r.summary["sim_time_s"] == pytest.approx(2.0)
    assert r.flows["cwnd_bytes"].iloc[0] == 20 * 1460


def test_random_loss_depends_on_the_seed(small):
    small["path"]["loss"] = 0.01
    small["flow"][0]["size"] = "5MB"
    small["duration"] = "20s"
    runs = [slowstart.run(small, seed=s).summary for s in (1, 1, 2)]
    strip = [{k: v for k, v in s.items() if k not in ("wall_s", "seed")} for s in runs]
    assert strip[0] == strip[1]
    assert strip[0] != strip[2]


def test_dict_scenario_with_two_flows_plots_two_panels(small):
    small["flow"].append({"start": "0.5s", "size": "1MB"})
    r = slowstart.run(small)
    assert sorted(r.flows["flow"].unique()) == [0, 1]
    assert r.flows[r.flows["flow"] == 1]["t_s"].min() >= 0.5
    fig = r.plot()
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert {"cwnd", "in flight", "slow start"} <= set(legend)


def test_core_rejects_a_bad_value_the_loader_passes(small):
    # The loader checks parameter names; the core checks values and names the flow.
    with pytest.raises(ValueError, match=r"flow\.0\."):
        slowstart.run(small, cc="vegas:alpha=5,beta=1")


def test_algorithms_come_from_the_core():
    names = [a["name"] for a in slowstart.algorithms()]
    assert "reno" in names
    for a in slowstart.algorithms():
        assert {"name", "summary", "source", "params"} <= set(a)


def test_phase_spans_last_until_the_next_phase():
    t = np.array([0.0, 1.0, 2.0, 5.0, 6.0])
    codes = np.array([0, 0, 3, 3, 4])
    assert phase_spans(t, codes) == [(0, 0.0, 2.0), (3, 2.0, 6.0), (4, 6.0, 6.0)]
    assert phase_spans(np.array([]), np.array([])) == []


def test_a_results_repr_is_one_line(satellite):
    assert repr(satellite) == "<FlowsResult satellite: 1 flow, 10.418 s simulated, seed 1>"


def test_a_result_shows_its_tables_and_figure_in_a_notebook(satellite):
    import base64
    import io

    from PIL import Image

    html = satellite._repr_html_()
    assert "satellite: seed 1, 10.418 s simulated" in html
    # The flow and link tables `slowstart run` prints, as HTML.
    assert "<th>completion_s</th>" in html and "<td>reno</td>" in html
    assert "<td>bottleneck</td>" in html
    png = html.split('src="data:image/png;base64,', 1)[1].split('"', 1)[0]
    figure = Image.open(io.BytesIO(base64.b64decode(png)))
    assert figure.size[0] > 300 and figure.size[1] > 200
