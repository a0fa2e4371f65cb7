"""Where the scenarios, the scorecard suite, the recorded traces and the examples are: in the
checkout the package runs from (an editable install, `make setup`), else the copy the wheel
ships (`make wheel`: the package's `_data`, found with importlib.resources); a scenarios/ folder
under the working directory comes first. Also reading a file a user names, and checking where a
user asks for files to be written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from slowstart import lazy
from slowstart.units import ScenarioError, show

# Read only where the package is installed (10 ms of imports a checkout need not pay).
resources = lazy.module("importlib.resources")


def _data_root() -> Path:
    """The folder holding scenarios/, suites/, traces/ and examples/: the checkout above the
    package when there is one, else the wheel's copy (the same layout, Makefile `wheel`)."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "Cargo.toml").is_file() and (checkout / "scenarios").is_dir():
        return checkout
    # An installed wheel is a folder on disk, so the Traversable is a Path.
    return Path(str(resources.files("slowstart") / "_data"))


REPO = _data_root()
PACKAGE_SCENARIOS = REPO / "scenarios"
# The built-in scorecard suite (`slowstart score`).
SUITE = REPO / "suites" / "scorecard.toml"
# Python controllers, the WebAssembly template and the BPF examples (docs/controllers.md).
EXAMPLES = REPO / "examples"


def scenario_dirs() -> list[Path]:
    """Candidate scenarios/ folders, in lookup order, that exist."""
    dirs = [Path.cwd() / "scenarios", PACKAGE_SCENARIOS]
    seen: list[Path] = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [s.resolve() for s in seen]:
            seen.append(d)
    return seen


def scenario_files() -> list[Path]:
    """The .toml scenarios of the first scenarios/ folder found."""
    dirs = scenario_dirs()
    return sorted(dirs[0].glob("*.toml")) if dirs else []


def scenario_path(name: str) -> Path:
    """A scenario given as a file path, or as a stem of a file in scenarios/."""
    path = Path(name)
    if path.exists():
        return path
    if path.suffix == ".toml":
        for d in scenario_dirs():
            if (d / path.name).is_file():
                raise ScenarioError(
                    f"{name}: no such file here; the name {path.stem} runs {d / path.name}"
                )
        return path
    for d in scenario_dirs():
        candidate = d / f"{name}.toml"
        if candidate.is_file():
            return candidate
    known = ", ".join(p.stem for p in scenario_files()) or "none found"
    raise ScenarioError(f"{name}: no such file or scenario (scenarios: {known})")


def read_user_bytes(
    path: Path, what: str, max_bytes: int, field: str = "", name: str | None = None
) -> bytes:
    """A file the user named (in `field`, if a setting names it; as `name`, if not the path):
    a regular file, since a device or a pipe may never end (`/dev/zero`, a FIFO), of at most
    `max_bytes`."""
    at = _where(path, field, name)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ScenarioError(f"{at}: no such file") from None
    except OSError as e:
        raise ScenarioError(f"{at}: cannot read: {e.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ScenarioError(f"{at}: is a directory, expected {what}")
    if not stat.S_ISREG(info.st_mode):
        raise ScenarioError(f"{at}: not a regular file (a device or a pipe), expected {what}")
    if info.st_size > max_bytes:
        raise ScenarioError(f"{at}: {info.st_size} bytes, more than {what} may have ({max_bytes})")
    try:
        with open(path, "rb") as fh:
            # Sized by the file, not the bound: read(n) allocates n bytes first.
            data = fh.read(info.st_size + 1)
    except OSError as e:
        raise ScenarioError(f"{at}: cannot read: {e.strerror}") from None
    if len(data) > info.st_size:
        raise ScenarioError(f"{at}: grew while it was read, expected {what}")
    return data


def read_user_text(
    path: Path, what: str, max_bytes: int, field: str = "", name: str | None = None
) -> str:
    """`read_user_bytes`, as UTF-8 text."""
    data = read_user_bytes(path, what, max_bytes, field, name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        at = _where(path, field, name)
        raise ScenarioError(f"{at}: not UTF-8 text (byte {e.start}), expected {what}") from None


def _where(path: Path, field: str, name: str | None) -> str:
    shown = path if name is None else name
    return f"{field}: {shown}" if field else str(shown)


def output_folder(value: object, option: str) -> Path:
    """A folder the user names for files to be written into (`--out`, `pcap=`), checked before
    any work is done: a name, not an existing file, under no existing file. ScenarioError
    naming `option` if not. Nothing is created."""
    if not isinstance(value, str | os.PathLike) or not os.fspath(value).strip():
        raise ScenarioError(f"{option}: expected a folder name, got {show(value)}")
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise ScenarioError(f"{option} {os.fspath(value)}: exists and is not a folder")
    _under_folders(path, option, value)
    return path


def output_file(value: object, option: str) -> Path:
    """A file the user names to be written (`--csv`, `report --out`), checked as
    `output_folder` checks a folder: a name, not an existing folder, under no existing file."""
    if not isinstance(value, str | os.PathLike) or not os.fspath(value).strip():
        raise ScenarioError(f"{option}: expected a file name, got {show(value)}")
    path = Path(value)
    if path.is_dir():
        raise ScenarioError(f"{option} {os.fspath(value)}: is a folder, expected a file name")
    _under_folders(path.parent, option, value)
    return path


def _under_folders(path: Path, option: str, value: str | os.PathLike[str]) -> None:
    """The nearest existing one of `path` and its parents is a folder (else nothing can be
    made under it)."""
    for at in (path, *path.parents):
        if at.exists():
            if not at.is_dir():
                raise ScenarioError(f"{option} {os.fspath(value)}: {at} is not a folder")
            return
