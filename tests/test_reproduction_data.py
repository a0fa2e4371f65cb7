"""The reproductions' published values are data files (python/slowstart/reproductions/data/),
read by one loader: each file is an experiment, found through importlib.resources as an
installed package finds it, and a file that names what the runner does not have is refused
naming the file."""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from slowstart.reproductions import reproduce

DATA = resources.files("slowstart.reproductions").joinpath("data")


def test_every_data_file_is_an_experiment_in_its_position():
    files = sorted(p.name.removesuffix(".toml") for p in DATA.iterdir() if p.name.endswith(".toml"))
    assert sorted(reproduce.EXPERIMENTS) == files
    positions = [tomllib.loads(DATA.joinpath(f"{n}.toml").read_text())["position"] for n in files]
    assert len(set(positions)) == len(positions)  # one order, no ties
    by_position = [n for _, n in sorted(zip(positions, files, strict=True))]
    assert list(reproduce.EXPERIMENTS) == by_position


def test_a_file_is_read_as_written():
    data = tomllib.loads(DATA.joinpath("floyd.toml").read_text())
    exp = reproduce.EXPERIMENTS["floyd"]
    assert (exp.title, exp.tolerance, exp.common) == (
        data["title"],
        data["tolerance"],
        tuple(data["common"]),
    )
    assert [(v.label, v.published) for v in exp.variants] == [
        (v["label"], v.get("published")) for v in data["variant"]
    ]


BASE = {"title": "t", "source": "s", "scenario": "satellite", "metric": "m", "unit": "s"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {**BASE, "tolerance": 0.1, "colour": "red"},
            r"^reproductions/data/x.toml: unknown keys \['colour'\]",
        ),
        (
            {
                **BASE,
                "tolerance": 0.1,
                "variant": [{"label": "a", "overrides": [], "measure": "no"}],
            },
            r"^reproductions/data/x.toml: variant 0.measure: expected one of acked-until",
        ),
        (
            {**BASE, "tolerance": 0.1, "runner": "no"},
            r"^reproductions/data/x.toml: runner: expected one of atou",
        ),
    ],
)
def test_a_file_naming_what_the_runner_lacks_is_refused_naming_the_file(data, message):
    with pytest.raises(ValueError, match=message):
        reproduce.experiment_of("x", data)
