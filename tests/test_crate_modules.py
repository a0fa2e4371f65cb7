"""The Rust crates' modules use each other without a cycle, as the Python package's do
(test_package_layout.py): a reader can start at a crate's lowest modules and read upwards.

A module and its submodules are one unit (`slow_start` holds `slow_start::suss`, which uses its
parent's types). An edge is a `crate::NAME` path in a module's code: comments, and modules under
`#[cfg(test)]`, are left out (a test may drive its algorithm through the registry).
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT
from test_package_layout import cycles

CRATES = ROOT / "crates"
TEST_MODULE = re.compile(
    r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([a-z]+\))?\s+)?mod\s+(\w+)"
)


def without_tests(source: str) -> tuple[str, set[str]]:
    """The source without its comments and `#[cfg(test)]` modules, and the names of the test
    modules declared in another file (`#[cfg(test)] mod sim_tests;`)."""
    source = "\n".join(line.split("//", 1)[0] for line in source.splitlines())
    elsewhere = set()
    while (m := TEST_MODULE.search(source)) is not None:
        rest = source[m.end() :].lstrip()
        if rest.startswith(";"):
            elsewhere.add(m.group(1))
            source = source[: m.start()] + rest[1:]
            continue
        depth, i = 0, source.index("{", m.end())
        for j in range(i, len(source)):
            depth += {"{": 1, "}": -1}.get(source[j], 0)
            if depth == 0:
                break
        source = source[: m.start()] + source[j + 1 :]
    return source, elsewhere


def module_graph(src: Path) -> dict[str, set[str]]:
    """A crate's top-level modules (lib.rs left out) → the ones their code names."""
    code: dict[str, str] = {}
    tests: set[str] = set()
    for path in sorted(src.rglob("*.rs")):
        unit = path.relative_to(src).with_suffix("").parts[0]
        text, elsewhere = without_tests(path.read_text())
        tests |= elsewhere
        if unit not in ("lib", "main"):
            code[unit] = code.get(unit, "") + text
    units = set(code) - tests
    return {
        unit: {
            m
            for m in re.findall(r"\bcrate::(\w+)", code[unit]) + grouped(code[unit])
            if m in units and m != unit
        }
        for unit in sorted(units)
    }


def grouped(code: str) -> list[str]:
    """The first name of each item of every `use crate::{a::{B, C}, d}` group: `a`, `d`."""
    names = []
    for m in re.finditer(r"\buse crate::\{", code):
        depth, j = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        group = code[m.end() : j - 1]
        while (flat := re.sub(r"\{[^{}]*\}", "", group)) != group:
            group = flat
        names += [item.strip().split("::")[0] for item in group.split(",")]
    return names


def test_no_crate_has_a_module_cycle():
    found = [
        f"{src.parent.name}: " + " -> ".join(cycle)
        for src in sorted(CRATES.glob("*/src"))
        for cycle in cycles(module_graph(src))
    ]
    assert not found, "module cycles: " + "; ".join(found)


def test_the_module_reader_sees_what_it_looks_for(tmp_path):
    """A made-up crate: a cycle through a nested `use crate::{..}` group and a path, an edge
    only in a comment and one only in a test module, neither of which counts."""
    src = tmp_path / "src"
    (src / "b").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod a;\npub mod b;\npub mod c;\n#[cfg(test)]\nmod t;\n")
    (src / "a.rs").write_text("use crate::{\n    b::{X, Y},\n    c,\n};\n")
    (src / "b.rs").write_text("pub mod inner;\n// crate::c::Y\n")
    (src / "b" / "inner.rs").write_text("fn f() -> crate::a::Z { todo!() }\n")
    (src / "c.rs").write_text(
        "pub struct Y;\n#[cfg(test)]\nmod tests {\n    fn g() { crate::a::Z; }\n}\n"
    )
    (src / "t.rs").write_text("use crate::a;\n")
    graph = module_graph(src)
    assert graph == {"a": {"b", "c"}, "b": {"a"}, "c": set()}
    assert cycles(graph) == [["a", "b", "a"]]
