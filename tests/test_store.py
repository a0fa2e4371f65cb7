"""The results store: runs keyed by content, stored as they complete, never run twice, and
nothing lost when a sweep is killed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import slowstart
from conftest import ROOT, cli
from slowstart.loading.scenario import load
from slowstart.running.records import run_key
from slowstart.running.store import SCHEMA_VERSION, Store, StoreError
from slowstart.running.sweeps import sweep

# A few ms of wall time per run.
SMALL = {
    "name": "small",
    "duration": "20s",
    "path": {"rate": "10Mbps", "rtt": "40ms", "buffer": "4bdp"},
    "flow": [{"cc": "reno", "size": "200kB"}],
}
VARY = {"flow.0.initcwnd": ["2", "10"], "path.buffer": ["0.5bdp", "4bdp"]}


def test_key_is_a_content_hash_of_config_seed_and_version():
    a = load(SMALL, seed=1)
    assert run_key(a) == run_key(load(dict(SMALL), seed=1))
    assert run_key(a) != run_key(load(SMALL, seed=2))
    assert run_key(a) != run_key(load(SMALL, seed=1, set=["flow.0.initcwnd=3"]))
    assert run_key(a) != run_key(a, version="0.0.0")


def test_a_stored_point_is_not_run_again_and_gives_the_same_rows(tmp_path):
    store = tmp_path / "r.duckdb"
    fresh = sweep(SMALL, VARY, seeds=[1, 2], jobs=1, store=store, traces=True)
    assert fresh.attrs == {"runs": 8, "stored": 0}
    again = sweep(SMALL, VARY, seeds=[1, 2, 3], jobs=2, store=store)
    assert again.attrs == {"runs": 4, "stored": 8}  # only seed 3 is new
    pd.testing.assert_frame_equal(again[again["seed"] != 3].reset_index(drop=True), fresh)
    forced = sweep(SMALL, VARY, seeds=[1], jobs=1, store=store, rerun=True)
    assert forced.attrs["runs"] == 4
    # Without a store, the same rows.
    pd.testing.assert_frame_equal(sweep(SMALL, VARY, seeds=[1, 2], jobs=1), fresh)

    table = slowstart.results(store)
    assert len(table) == 12  # one row per flow per distinct run
    assert {"source", "scenario", "flow.0.initcwnd", "path.buffer", "seed", "completion_s"} <= set(
        table.columns
    )
    with Store(store, read_only=True) as s:
        key = table["key"].iloc[0]
        result = s.result(key)
        assert len(result.flows) > 0
        assert (s.trace_dir / f"{key}.flows.parquet").exists()
        assert result.summary["flows"][0]["completion_s"] == table["completion_s"].iloc[0]


def test_results_command_lists_and_exports(tmp_path):
    store = tmp_path / "r.duckdb"
    sweep(SMALL, {"flow.0.initcwnd": ["2", "10"]}, jobs=1, store=store)
    listing = cli("results", str(store))
    assert listing.returncode == 0, listing.stderr
    assert "2 runs, 2 flows rows" in listing.stdout
    assert "sweep" in listing.stdout and "small" in listing.stdout
    csv, parquet = tmp_path / "t.csv", tmp_path / "t.parquet"
    done = cli("results", str(store), "--csv", str(csv), "--parquet", str(parquet))
    assert done.returncode == 0, done.stderr
    assert len(pd.read_csv(csv)) == 2
    pd.testing.assert_frame_equal(pd.read_parquet(parquet), slowstart.results(store))


def test_a_newer_or_foreign_store_is_refused_with_a_clear_message(tmp_path):
    store = tmp_path / "r.duckdb"
    sweep(SMALL, {"flow.0.initcwnd": ["2"]}, jobs=1, store=store)
    con = duckdb.connect(str(store))
    con.execute("UPDATE meta SET value = ? WHERE name = 'schema'", [str(SCHEMA_VERSION + 1)])
    con.close()
    with pytest.raises(StoreError, match=f"store schema {SCHEMA_VERSION + 1}, newer than"):
        slowstart.results(store)
    done = cli("results", str(store))
    assert done.returncode == 2
    assert "newer than this slowstart's" in done.stderr
    foreign = tmp_path / "other.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    with pytest.raises(StoreError, match="not a slowstart results store"):
        slowstart.results(foreign)
    text = tmp_path / "notes.duckdb"
    text.write_text("hello\n" * 1000)
    with pytest.raises(StoreError, match="notes.duckdb"):
        slowstart.results(text)
    with pytest.raises(StoreError, match="no such results store"):
        slowstart.results(tmp_path / "missing.duckdb")


def _stored(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with Store(store, read_only=True) as s:
            return len(s.keys())
    except StoreError:  # being created, or held by the writer for longer than a reader waits
        return -1


def test_a_sweep_killed_with_sigkill_and_restarted_runs_only_what_is_missing(tmp_path):
    store = tmp_path / "r.duckdb"
    # 40 runs of about 50 ms each, on one process: two seconds or so in all.
    args = ["sweep", "lfn-early-loss", "--vary", "flow.0.initcwnd=2,4,6,8,10,12,14,16"]
    args += ["--seeds", "1-5", "--duration", "30s", "--jobs", "1", "--store", str(store)]
    args += ["--json"]
    cmd = [sys.executable, "-m", "slowstart", *args]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Kill it once some runs are stored (a reader can open the store between its batches).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if _stored(store) >= 4:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "still running when killed"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    before = _stored(store)
    assert 0 < before < 40, before
    print(f"killed with {before} of 40 runs stored")
    again = cli(*args)
    assert again.returncode == 0, again.stderr
    assert f"{40 - before} runs made, {before} read from" in again.stderr
    rows = pd.DataFrame(json.loads(again.stdout))
    assert len(rows) == 40 and _stored(store) == 40
    # Every row the same as an uninterrupted sweep's.
    clean = cli(*args[:-3], "--store", str(tmp_path / "clean.duckdb"), "--json")
    assert clean.returncode == 0, clean.stderr
    pd.testing.assert_frame_equal(rows, pd.DataFrame(json.loads(clean.stdout)))


def test_reproductions_store_their_runs_and_read_them_back(tmp_path):
    from slowstart.reproductions.reproduce import EXPERIMENTS, run_experiment, run_variant

    store = tmp_path / "r.duckdb"
    exp = EXPERIMENTS["web-initcwnd"]
    first, _ = run_experiment(exp, store=store)
    again, _ = run_experiment(exp, store=store)
    assert [r.as_dict() for r in again] == [r.as_dict() for r in first]
    with Store(store) as s:
        runs = s.runs()
        assert set(runs["source"]) == {"reproduce web-initcwnd"}
        assert len(runs) == len({v.overrides for v in exp.variants})  # one per distinct config
        assert not any(run_variant(exp, v, s)[1] for v in exp.variants)  # none made again
        assert run_variant(exp, exp.variants[0], s, rerun=True)[1]


def test_traces_of_a_run_stored_without_them_are_made_again_exactly(tmp_path, monkeypatch):
    store = tmp_path / "r.duckdb"
    sweep(SMALL, {"flow.0.initcwnd": ["2", "10"]}, seeds=[1], jobs=1, store=store)
    direct = slowstart.run_config(load(SMALL, seed=1, set=["flow.0.initcwnd=2"]))
    key = run_key(direct.config)
    with Store(store, read_only=True) as s:
        assert s.result(key).flows.empty  # a sweep stores summaries only
    with Store(store) as s:
        made = s.traces(s.find(key[:8]))
        pd.testing.assert_frame_equal(made.flows, direct.flows)
        pd.testing.assert_frame_equal(made.queues, direct.queues)
    assert sorted(p.name for p in (tmp_path / "r.duckdb.traces").iterdir()) == [
        f"{key}.flows.parquet",
        f"{key}.queues.parquet",
    ]

    # Kept: read back from the files, not run again.
    def no_run(_config):
        raise AssertionError("ran again")

    monkeypatch.setattr("slowstart.running.api.run_config", no_run)
    with Store(store, read_only=True) as s:
        pd.testing.assert_frame_equal(s.traces(key).flows, direct.flows)


def test_traces_need_the_engine_that_stored_the_run(tmp_path):
    store = tmp_path / "r.duckdb"
    sweep(SMALL, {"flow.0.initcwnd": ["2"]}, seeds=[1], jobs=1, store=store)
    con = duckdb.connect(str(store))
    con.execute("UPDATE runs SET version = '0.0.1+core.000000000000'")
    key = con.execute("SELECT key FROM runs").fetchone()[0]
    con.close()
    with Store(store) as s, pytest.raises(StoreError, match="--rerun --traces"):
        s.traces(key)
    with Store(store) as s, pytest.raises(StoreError, match="no run with a key starting"):
        s.find("zz")


def test_cli_writes_one_runs_traces(tmp_path):
    store = tmp_path / "r.duckdb"
    sweep(SMALL, {"flow.0.initcwnd": ["2", "10"]}, seeds=[1], jobs=1, store=store)
    key = slowstart.results(store)["key"].iloc[1]
    out = tmp_path / "run"
    done = cli("results", str(store), "--traces", key[:10], "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert {p.name for p in out.iterdir()} == {
        "summary.json",
        "flows.parquet",
        "queues.parquet",
        "cwnd.png",
    }
    assert json.loads((out / "summary.json").read_text())["flows"][0]["bytes_delivered"] > 0
    done = cli("results", str(store), "--traces", "ffff", "--out", str(out))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "'ffff'" in done.stderr
    done = cli("results", str(store), "--traces", key)
    assert done.returncode == 2 and "--out" in done.stderr
    missing = tmp_path / "none.duckdb"
    done = cli("results", str(missing), "--traces", key, "--out", str(out))
    assert done.returncode == 2 and "no such results store" in done.stderr
    assert not missing.exists()  # asking of a store that is not there does not make one
