"""What a newcomer meets in the first hour (#40): a run that is valid but probably not meant
says so on one line; a user's controller's slow-start exit is measured from what it reports;
errors name the fix; a score or a reproduction with `--cc` does not mislead; a controller's
store key is its code's."""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

import slowstart
from conftest import ROOT, cli
from slowstart.loading.scenario import load
from slowstart.reports import score_page
from slowstart.reports.score import Cell, Scorecard, format_text, score
from slowstart.reports.score_suite import load_suite
from slowstart.reproductions import reproduce
from slowstart.running import notices, sweeps
from slowstart.running.records import run_key
from slowstart.units import ScenarioError

SMALL = {
    "duration": "5s",
    "path": {"rate": "10Mbps", "rtt": "40ms", "buffer": "1bdp"},
    "flow": [{"cc": "reno", "size": "300kB"}],
}

# A controller that reports ssthresh but no phase (the README's DelayStart abridged the same
# way), one that reports neither, and one whose __init__ forgets **common.
CONTROLLERS = '''
import slowstart


class Halving(slowstart.Controller):
    """Reno's slow start, then halves at the first loss and holds: ssthresh only."""

    def __init__(self, **common):
        super().__init__(**common)
        self.window, self.threshold = self.initcwnd * self.mss, None

    def on_ack(self, ev):
        if self.threshold is None or self.window < self.threshold:
            self.window += ev.bytes_acked

    def on_congestion_event(self, ev):
        self.threshold = self.window = max(ev.bytes_in_flight // 2, 2 * self.mss)

    def on_rto(self, now, bytes_in_flight):
        self.threshold, self.window = max(bytes_in_flight // 2, 2 * self.mss), self.mss

    def cwnd(self):
        return self.window

    def ssthresh(self):
        return self.threshold


class Silent(Halving):
    ssthresh = slowstart.Controller.ssthresh


class Forgetful(Halving):
    def __init__(self, gain=2):
        self.gain = gain
'''


@pytest.fixture
def controllers(tmp_path: Path) -> Path:
    path = tmp_path / "mine.py"
    path.write_text(CONTROLLERS)
    return path


# --- one warning line for a run that is valid but probably not meant ------------------------


def test_a_flow_that_delivers_nothing_says_so_on_stderr(tmp_path: Path):
    """`rtt = "600s"` (600 meant as ms): the run ends with nothing delivered and says why."""
    ran = cli("run", "satellite", "--set", "path.rtt=600s", "--duration", "2s", "--quiet")
    assert ran.returncode == 0, ran.stderr
    warnings = [line for line in ran.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: flow 0 delivered nothing in 2 s: the round trip (600 s) is longer than the run"
    ]


@pytest.mark.parametrize(
    ("sets", "said"),
    [
        (
            ["flow.0.initcwnd=29200"],
            "flow.0.initcwnd = 29200 is 20 x mss: initcwnd counts segments",
        ),
        (
            ["path.rate=10Mbps", "path.rtt=20ms", "flow.0.initcwnd=3000"],
            "flow.0.initcwnd = 3000 segments (4.38 MB) is 88 times what the path holds",
        ),
        (
            ["path.rate=1Mbps", "path.buffer=1000000pkt"],
            "link bottleneck: its buffer takes 200 minutes to drain at the line rate",
        ),
    ],
)
def test_settings_far_outside_the_path_are_named_before_the_run(sets: list[str], said: str):
    told = notices.before(load("satellite", set=sets))
    assert len(told) >= 1 and told[0].startswith(said), told


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "scenarios").glob("*.toml")))
def test_no_shipped_scenario_is_warned_about(name: str):
    """The warnings are for settings nobody means: every scenario we ship passes silently."""
    config = load(name)
    assert notices.before(config) == []


# --- a user's controller's phase --------------------------------------------------------------


def test_slow_start_exit_is_read_from_ssthresh_when_phase_is_not_given(controllers: Path):
    """RFC 5681 §3.1: slow start while cwnd < ssthresh. A controller with ssthresh() and no
    phase() leaves slow start at its first loss; one with neither never does, and says so."""
    halving = slowstart.run(SMALL, cc=f"{controllers}:Halving")
    flow = halving.summary["flows"][0]
    assert flow["loss_events"] >= 1 and flow["slow_start_exit_s"] is not None
    assert set(halving.flows["phase"]) == {"slow_start", "congestion_avoidance"}

    scenario = Path(controllers).parent / "small.toml"
    scenario.write_text(
        'duration = "5s"\npath = { rate = "10Mbps", rtt = "40ms", buffer = "1bdp" }\n'
        '[[flow]]\ncc = "mine.py:Silent"\nsize = "300kB"\n'
    )
    ran = cli("run", str(scenario), "--quiet", "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["flows"][0]["slow_start_exit_s"] is None
    warned = [line for line in ran.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "mine.py:Silent@" in warned[0], warned
    assert "defines neither phase() nor ssthresh()" in warned[0]


# --- errors that name the fix -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "cwd", "message"),
    [
        (
            ["--cc", "examples/python/delay_start:DelayStart"],
            ROOT,
            'error: flow.0.cc: "examples/python/delay_start:DelayStart" names no algorithm; your '
            "own controller is written PATH.py:CLASS or PATH.wasm: did you mean "
            '"examples/python/delay_start.py:DelayStart"?',
        ),
        (
            ["--set", "flow.initcwnd=20"],
            ROOT,
            "error: --set flow.initcwnd=20: flow is a list of tables; give flow.0.initcwnd (the "
            "first) or flow.*.initcwnd (every one)",
        ),
    ],
)
def test_a_mistake_is_one_line_naming_the_fix(args: list[str], cwd: Path, message: str):
    ran = cli("run", "satellite", "--duration", "1s", *args, cwd=cwd)
    assert ran.returncode == 2
    assert ran.stderr == message + "\n"


def test_a_scenario_path_from_another_folder_names_the_name_that_works(tmp_path: Path):
    ran = cli("run", "scenarios/satellite.toml", cwd=tmp_path)
    assert ran.returncode == 2
    assert ran.stderr == (
        "error: scenarios/satellite.toml: no such file here; the name satellite runs "
        f"{ROOT / 'scenarios' / 'satellite.toml'}\n"
    )


def test_an_init_without_common_is_refused_at_load_naming_the_fix(controllers: Path):
    with pytest.raises(ScenarioError) as err:
        load(SMALL, cc=f"{controllers}:Forgetful")
    assert str(err.value) == (
        "flow.0.cc: mine.py: Forgetful.__init__ does not take the keywords every controller is "
        "built with (mss, initcwnd, abc, seed, paced); add **common to it and call "
        "super().__init__(**common)"
    )


# --- ranks and labels that mean something -------------------------------------------------------


def test_one_controller_alone_has_no_rank(tmp_path: Path):
    suite = tmp_path / "one.toml"
    suite.write_text(
        'version = 1\nname = "one"\n[[path]]\nkey = "short"\ntitle = "t"\nsource = "a test"\n'
        'metrics = ["completion_s"]\nfigure = "1s"\n[path.scenario]\nname = "short"\n'
        'duration = "5s"\npath = { rate = "10Mbps", rtt = "40ms", buffer = "1bdp" }\n'
        'flow = [{ cc = "reno", size = "200kB" }]\n'
    )
    card = score(load_suite(suite), ["reno"], store=tmp_path / "r.duckdb", jobs=1)
    text = format_text(card)
    assert "*" not in text.split("overall")[0], "alone, nothing is best"
    assert "one controller has no rank" in text


def test_reproduce_with_cc_labels_each_row_once():
    """satellite's cc-only rows on two scenarios were two rows of the same label."""
    exp = reproduce.with_controllers(reproduce.EXPERIMENTS["satellite"], ["mine.py:Mine"])
    labels = [v.label for v in exp.variants]
    assert len(labels) == len(set(labels)), labels
    assert {"mine.py:Mine on satellite", "mine.py:Mine on satellite-picoquic-test"} <= set(labels)


def test_a_controller_in_a_scenario_file_is_found_from_the_files_folder(tmp_path: Path):
    folder = tmp_path / "study"
    folder.mkdir()
    shutil.copy(ROOT / "examples" / "python" / "reno.py", folder / "my_reno.py")
    (folder / "s.toml").write_text(
        'duration = "1s"\npath = { rate = "10Mbps", rtt = "40ms" }\n'
        '[[flow]]\ncc = "my_reno.py:Reno"\nsize = "100kB"\n'
    )
    config = load(folder / "s.toml")  # from the repository's folder, not study/
    assert config["flows"][0]["cc"]["guest"]["path"] == str((folder / "my_reno.py").resolve())


def test_a_controllers_store_key_is_its_code_not_how_it_was_passed(controllers: Path):
    spec = importlib.util.spec_from_file_location("mine_imported", controllers)
    module = importlib.util.module_from_spec(spec)
    sys.modules["mine_imported"] = module
    try:
        spec.loader.exec_module(module)
        as_class = run_key(load(SMALL, cc=module.Halving))
        as_file = run_key(load(SMALL, cc=f"{controllers}:Halving"))
        other = run_key(load(SMALL, cc=module.Silent))
    finally:
        del sys.modules["mine_imported"]
    assert as_class == as_file
    assert other != as_file


# --- figures a newcomer reads right ---------------------------------------------------------


def test_the_sweep_figure_names_its_quantity_and_shows_a_missing_value_as_missing():
    table = pd.DataFrame(
        {
            "path.buffer": ["0.5bdp", "1bdp", "2bdp"],
            "flow": [0, 0, 0],
            "cc": ["reno"] * 3,
            "median": [4.5, math.nan, 4.6],
            "min": [4.5, math.nan, 4.6],
            "max": [4.5, math.nan, 4.6],
        }
    )
    ax = sweeps.plot(table, ["path.buffer"], "completion_s").axes[0]
    assert ax.get_ylabel() == "completion (s)"
    assert ax.get_title() == "completion (s) (reno) against path.buffer"
    # No mark on the scale where there is no value: a dotted line across the axes, said so.
    assert not [line for line in ax.lines if line.get_color() == "red"]
    missing = [line for line in ax.lines if line.get_linestyle() == ":"]
    assert [line.get_xdata()[0] for line in missing] == [1]
    assert "no value" in [t.get_text() for t in ax.texts]


def test_the_rank_heat_map_has_a_colour_scale_and_greys_a_missing_value(tmp_path: Path):
    """A missing value is grey in every row, never a colour of the scale (it was dark green
    in a row where every controller had none, dark red elsewhere)."""
    suite = tmp_path / "two.toml"
    suite.write_text(
        'version = 1\nname = "two"\n'
        + "".join(
            f'[[path]]\nkey = "{k}"\ntitle = "t"\nsource = "a test"\nmetrics = ["completion_s"]\n'
            'figure = "1s"\n[path.scenario]\nduration = "5s"\n'
            'path = { rate = "10Mbps", rtt = "40ms" }\nflow = [{ cc = "reno", size = "1MB" }]\n'
            for k in ("some", "none")
        )
    )
    paths = load_suite(suite).paths
    values = {("some", "reno"): 1.0, ("some", "cubic"): None}
    cells = {
        (p.key, cc): Cell(p, cc, [{"completion_s": values.get((p.key, cc))}])
        for p in paths
        for cc in ("reno", "cubic")
    }
    fig = score_page.rank_figure(Scorecard(load_suite(suite), ["reno", "cubic"], cells))
    heat, bar = fig.axes
    assert bar.get_ylabel() == "rank in its row (grey: no value)"
    grid = heat.images[0].get_array()
    assert grid.mask.tolist() == [[False, True], [True, True]]  # masked: drawn grey
    assert [t.get_text() for t in heat.texts] == ["1", "-", "-", "-"]


def test_a_module_level_value_the_controller_uses_is_part_of_its_key(tmp_path: Path):
    """A constant beside the class, not in it, still makes an edited controller a new one."""
    keys = []
    for gain in (2, 3):
        path = tmp_path / f"gain{gain}.py"
        path.write_text(
            CONTROLLERS.replace(
                "import slowstart\n", f"import slowstart\n\nGAIN = {gain}\n"
            ).replace("self.window += ev.bytes_acked", "self.window += GAIN * ev.bytes_acked // 2")
        )
        keys.append(run_key(load(SMALL, cc=f"{path}:Halving")))
    assert keys[0] != keys[1]
