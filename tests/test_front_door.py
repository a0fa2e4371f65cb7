"""The `slowstart` command's front door (slowstart/cli/): bad input is exit 2 and one line, a
bug is exit 1 and one line (its traceback with --debug), --version, and the registry of real
stacks that `real` and `compare` share (slowstart/real/stacks.py)."""

from __future__ import annotations

import argparse

import pytest

import slowstart
from conftest import cli
from slowstart import cli as front
from slowstart.cli import listing
from slowstart.real import program_ends, stacks, swarm
from slowstart.running import api
from slowstart.units import ScenarioError


def test_version_is_the_packages():
    ran = cli("--version")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == f"slowstart {slowstart.__version__}\n"


def broken(error: Exception):
    def handle(args: argparse.Namespace) -> int:
        raise error

    return handle


@pytest.mark.parametrize(
    "error",
    [
        KeyError("flows"),
        AttributeError("no attribute 'x'"),
        ValueError("invalid literal for int() with base 10: 'x'"),
    ],
)
def test_a_bug_is_exit_1_and_one_line_naming_it(monkeypatch, capsys, error):
    """A KeyError was once mapped to exit 2 as `missing "flows"`, and any ValueError to exit
    2: a bug looked like the user's mistake."""
    monkeypatch.setattr(listing, "handle", broken(error))
    assert front.main(["list"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"error: internal: {type(error).__name__}: ")
    assert "rerun with --debug" in err


def test_debug_shows_a_bugs_traceback(monkeypatch, capsys):
    monkeypatch.setattr(listing, "handle", broken(KeyError("flows")))
    assert front.main(["--debug", "list"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert "raise error" in err  # the line that raised, as Python prints it
    assert err.rstrip().endswith("KeyError: 'flows'")


@pytest.mark.parametrize("debug", [[], ["--debug"]])
def test_bad_input_is_exit_2_and_one_line_with_or_without_debug(monkeypatch, capsys, debug):
    monkeypatch.setattr(listing, "handle", broken(ScenarioError("path.rate: expected a rate")))
    assert front.main([*debug, "list"]) == 2
    assert capsys.readouterr().err == "error: path.rate: expected a rate\n"


def test_the_real_stacks_refusals_are_bad_input():
    """What a stack cannot run, or a program pair or real swarm refuses, is the user's input:
    a ScenarioError, exit 2 (they were ValueErrors, told from bugs by nothing)."""
    for kind in (program_ends.ProgramError, swarm.SwarmError, api.ControllerFault):
        assert issubclass(kind, ScenarioError), kind


def test_every_stack_choice_is_a_registry_entry():
    parser = front.build_parser()
    choices = {}
    for command in ("real", "compare"):
        args = parser.parse_args([command, "satellite"])
        assert args.stack is None  # the default is the registry's, chosen when run
        sub = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
        (action,) = [a for a in sub._actions if a.dest == "stack"]
        choices[command] = list(action.choices)
        for name in stacks.CHOICES:
            assert f"{name}: {stacks.STACKS[name].help}" in action.help
    assert choices["real"] == list(stacks.CHOICES)
    assert choices["compare"] == [*stacks.CHOICES, "both"]
    assert set(stacks.BOTH) <= set(stacks.CHOICES)
    assert stacks.CHOICES[0] == stacks.DEFAULT


def test_a_stack_refuses_what_it_cannot_run_by_its_own_entry():
    """Each refusal comes from the stack's entry, named by where the controller was given."""
    refuses = {name: s.refuses("flow.0.cc", "lss") for name, s in stacks.STACKS.items()}
    assert refuses["kernel"] is not None and refuses["kernel"].startswith("flow.0.cc: the kernel")
    assert refuses["quinn-native"] is not None and "quinn's own" in refuses["quinn-native"]
    assert refuses["udp"] is None and refuses["quinn"] is None
    ns = argparse.Namespace(stack="both", cc="lss")
    assert front.check_real_cc(ns) == refuses["kernel"].replace("flow.0.cc", "--cc")


def test_program_pairs_choose_their_stack():
    program = {"program": {"server": ["srv"], "client": ["cli"]}}
    config = {"flows": [program]}
    assert stacks.for_config(config, None).name == "program"
    with pytest.raises(ScenarioError, match="^--stack: this scenario's flows are carried"):
        stacks.for_config(config, "udp")
    assert stacks.for_config({"flows": [{}]}, None).name == stacks.DEFAULT
    assert stacks.for_config({"flows": [{}]}, "quinn").name == "quinn"
