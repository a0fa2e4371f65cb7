"""Where the repository's scenarios/ folder is: under the working directory, else beside the
package source (an editable install from the repository); and the built-in scorecard suite."""

from __future__ import annotations

from pathlib import Path

from slowstart.units import ScenarioError

REPO = Path(__file__).resolve().parents[2]
PACKAGE_SCENARIOS = REPO / "scenarios"
# The built-in scorecard suite (`slowstart score`).
SUITE = REPO / "suites" / "scorecard.toml"


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
    if path.exists() or path.suffix == ".toml":
        return path
    for d in scenario_dirs():
        candidate = d / f"{name}.toml"
        if candidate.is_file():
            return candidate
    known = ", ".join(p.stem for p in scenario_files()) or "none found"
    raise ScenarioError(f"{name}: no such file or scenario (scenarios: {known})")
