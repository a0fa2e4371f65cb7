"""The core owns every scenario key, every word and every trace column (crates/slowstart-config:
keys.rs, config/, trace.rs; `_core.defaults()` and `_core.schema()`); the Python package reads
them and declares none of them again (issue #38).

A literal list of names re-declares one of the core's lists when it names all of it and nothing
else: one table's keys or canonical fields, one choice's words or canonical values, one trace
table's columns, one of keys.rs's named lists. Looked for: a tuple, list or set assigned at
module or class level (`POPULATIONS = ("tcp", "utp", "mixed")`); a dict assigned there whose
keys are a table's keys, fields or columns or a named list (a table of each key's meaning); and
a dict anywhere whose keys are a trace table's columns or the fields a swarm decides of its
transports (the eight columns of the flow trace, written out by a converter). A dict keyed by a
choice's values (figure colours, published numbers) is the project's own.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from conftest import ROOT
from slowstart import _core
from slowstart.running.api import shown_name

PACKAGE = ROOT / "python" / "slowstart"


def core_lists() -> dict[str, frozenset[str]]:
    """Every list of names the core owns, by where it is: `keys.TABLE`, `fields.TABLE` (the
    canonical fields a table's keys fill), `words.CHOICE` and `values.CHOICE` (its words, and
    the canonical values they stand for),
    `columns.TABLE` and `shown.TABLE` (a trace table's columns, as the core and as a frame
    names them),
    `names.NAME` (keys.rs's named lists) and `swarm_decided`."""
    defaults = json.loads(_core.defaults())
    keys = defaults["keys"]
    out: dict[str, frozenset[str]] = {}
    for table, listed in keys["tables"].items():
        out[f"keys.{table}"] = frozenset(k["key"] for k in listed)
        out[f"fields.{table}"] = frozenset(f["field"] for k in listed for f in k["fields"])
    for choice, pairs in defaults["word_lists"].items():
        out[f"words.{choice}"] = frozenset(word for word, _ in pairs)
        out[f"values.{choice}"] = frozenset(value for _, value in pairs)
    schema = json.loads(_core.schema())
    for table in ("flows", "queues"):
        out[f"columns.{table}"] = frozenset(schema[table])
        out[f"shown.{table}"] = frozenset(shown_name(c) for c in schema[table])
    for name in ("not_in_swarm_flow", "not_with_swarm", "swarm_tables", "queue_kinds"):
        out[f"names.{name}"] = frozenset(keys[name])
    out["swarm_decided"] = frozenset(defaults["swarm_decided"])
    return out


def _strings(nodes: list[ast.expr | None]) -> list[str] | None:
    """The strings of a literal's items, None if one is not a string constant."""
    if not all(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in nodes):
        return None
    return [n.value for n in nodes]  # type: ignore[union-attr]


def _literal(value: ast.expr) -> list[str] | None:
    """The names a tuple, list, set, dict (its keys) or `tuple(...)`/`frozenset(...)` of one
    literally lists."""
    func = value.func if isinstance(value, ast.Call) else None
    if isinstance(func, ast.Name) and func.id in ("tuple", "list", "frozenset"):
        return _literal(value.args[0]) if len(value.args) == 1 else None  # type: ignore[attr-defined]
    if isinstance(value, ast.Tuple | ast.List | ast.Set):
        return _strings(list(value.elts))
    if isinstance(value, ast.Dict):
        return _strings(list(value.keys))
    return None


# Which core lists a dict's keys re-declare: at module or class level, and anywhere.
DECLARED_DICTS = ("keys.", "fields.", "names.", "columns.", "shown.", "swarm_decided")
ANY_DICTS = ("columns.", "shown.", "swarm_decided")


def declarations(tree: ast.Module) -> list[tuple[int, list[str], tuple[str, ...] | None]]:
    """(line, names, which core lists it may re-declare: None for any) of each literal list
    of names in the module (see the module's docstring)."""
    found: list[tuple[int, list[str], tuple[str, ...] | None]] = []
    bodies = [tree.body, *(c.body for c in ast.walk(tree) if isinstance(c, ast.ClassDef))]
    declared = set()
    for body in bodies:
        for node in body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                names = _literal(node.value)
                if names is not None:
                    is_dict = isinstance(node.value, ast.Dict)
                    found.append((node.lineno, names, DECLARED_DICTS if is_dict else None))
                    declared.add(id(node.value))
    for node in ast.walk(tree):
        names = _literal(node) if isinstance(node, ast.Dict) and id(node) not in declared else None
        if names is not None:
            found.append((node.lineno, names, ANY_DICTS))
    return found


def redeclared(names: list[str], lists: dict[str, frozenset[str]], kinds: tuple[str, ...] | None):
    """The core list `names` is all of (of the `kinds` given), or None."""
    for where, owned in lists.items():
        if kinds is not None and not where.startswith(kinds):
            continue
        if len(owned) >= 2 and len(names) == len(owned) and set(names) == owned:
            return where
    return None


def redeclarations(package: Path) -> list[str]:
    lists = core_lists()
    out = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for line, names, kinds in declarations(tree):
            where = redeclared(names, lists, kinds)
            if where is not None:
                at = path.relative_to(package.parent)
                out.append(f"{at}:{line}: {', '.join(names)} (the core's {where})")
    return out


def test_python_declares_no_key_word_or_trace_column_the_core_owns():
    found = redeclarations(PACKAGE)
    assert not found, "read these from the core (slowstart.loading.defaults):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        'POPULATIONS = ("tcp", "utp", "mixed")\n',
        "class Swarm:\n    SEEDINGS = ['never_leave', 'random_stay']\n",
        'LOSS_KEYS: tuple[str, ...] = tuple(("p", "r", "loss_bad", "loss_good"))\n',
        'QUEUE_DOCS = {k: "" for k in ()}\nDOCS = {"droptail": 1, "codel": 2, "fq_codel": 3, '
        '"pie": 4, "red": 5, "dualpi2": 6}\n',
        "def frame(df):\n    return {"
        + ", ".join(
            f'"{c}": df'
            for c in ("t_s", "flow", "cwnd_bytes", "ssthresh_bytes", "inflight_bytes")
            + ("srtt_s", "delivered_bytes", "phase")
        )
        + "}\n",
    ],
)
def test_a_redeclaration_is_found(tmp_path: Path, source: str):
    """Each form of re-declaration the test looks for, in a made-up package."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(source)
    assert len(redeclarations(tmp_path / "pkg")) == 1


@pytest.mark.parametrize(
    "source",
    [
        # Presentation keyed by the core's values.
        'COLOURS = {"tcp": "#c2410c", "utp": "#1f3b73", "mixed": "#2e7d32"}\n',
        # A selection of a table's keys (those a real stack takes) is the project's own.
        'TAKEN = ("mss", "header_bytes", "abc")\n',
        # A config built in a function, field by field.
        'def ge(p):\n    return {"p": p, "r": 1 - p, "loss_bad": 1.0, "loss_good": 0.0}\n',
        # Using two keys in a function is not declaring them.
        'def f(t):\n    return [t[k] for k in ("tcp", "utp")]\n',
        # A scenario written as data names some keys of a table, not all.
        'def f():\n    return {"duration": "1s", "seed": 1}\n',
        # One name is a use, not a list.
        'DEFAULT = ("reno",)\n',
    ],
)
def test_what_is_not_a_redeclaration(tmp_path: Path, source: str):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(source)
    assert redeclarations(tmp_path / "pkg") == []
