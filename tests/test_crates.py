"""The crates others depend on (slowstart-cc, slowstart-guest, slowstart-quinn): their versions
are the workspace's, and a crate outside the workspace (examples/quinn-endpoint) builds on them
and runs a QUIC transfer with a slowstart controller. `make rust-test` packages them and runs
`cargo publish --dry-run` (Makefile, `crates`)."""

from __future__ import annotations

import os
import subprocess
import tomllib

from conftest import ROOT

WORKSPACE = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]
DOWNSTREAM = ROOT / "examples" / "quinn-endpoint"


def test_the_crates_depended_on_by_version_have_the_workspace_version():
    version = WORKSPACE["package"]["version"]
    ours = {k: v for k, v in WORKSPACE["dependencies"].items() if k.startswith("slowstart-")}
    assert {"slowstart-cc", "slowstart-guest"} <= set(ours)
    assert {name: dep["version"] for name, dep in ours.items()} == dict.fromkeys(ours, version)


def test_the_published_crates_carry_what_crates_io_shows():
    for name in ("slowstart-cc", "slowstart-guest", "slowstart-quinn"):
        package = tomllib.loads((ROOT / "crates" / name / "Cargo.toml").read_text())["package"]
        assert package.get("publish", True), name
        for key in ("description", "readme", "keywords", "categories"):
            assert package.get(key), (name, key)
        for key in ("version", "license", "rust-version", "edition"):
            assert package.get(key) == {"workspace": True}, (name, key)
        readme = (ROOT / "crates" / name / package["readme"]).read_text()
        assert "```rust\n" in readme, name  # run by `cargo test --doc` (ReadmeDoctests)


def test_a_downstream_crate_runs_a_quinn_transfer_with_a_slowstart_controller():
    manifest = tomllib.loads((DOWNSTREAM / "Cargo.toml").read_text())
    assert "workspace" in manifest  # its own workspace, not one of ours
    assert manifest["dependencies"]["slowstart-quinn"] == "0.1"  # by version, as a user's
    # The workspace's target folder and the profile `cargo test` built quinn's dependencies in,
    # so only the example itself is compiled.
    env = os.environ | {"CARGO_TARGET_DIR": str(ROOT / "target")}
    cmd = ["cargo", "run", "--quiet", "--locked", "--profile", "test"]
    cmd += ["--manifest-path", str(DOWNSTREAM / "Cargo.toml"), "--", "cubic:slow_start=hystart++"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = proc.stdout.strip()
    assert line.startswith("cubic:slow_start=hystart++: 4194304 bytes received, cwnd "), line
