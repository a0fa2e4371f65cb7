"""MkDocs hooks: a line `<!-- generated: NAME -->` in a page is replaced by what
slowstart.loading.reference writes for NAME from the core (scenario keys, algorithms, queue
disciplines), so those pages cannot drift from the code."""

from __future__ import annotations

import re

from slowstart.loading.reference import GENERATED

_MARK = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)


def on_page_markdown(markdown: str, **_: object) -> str:
    def generate(m: re.Match[str]) -> str:
        if m.group(1) not in GENERATED:
            raise ValueError(f"no generated part named {m.group(1)!r}: {sorted(GENERATED)}")
        return GENERATED[m.group(1)]()

    return _MARK.sub(generate, markdown)
