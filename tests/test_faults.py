"""Faults survived, nothing lost (issue #43): each test injects one fault into a sweep, its
store or its cluster and checks what a user who left it running would expect. The quick ones
run in `make test`; those that take minutes or need root are marked `faults` and run in
`make test-faults` (docs/testing.md gives the figures each gave)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

import slowstart
from slowstart.running.store import Store

FAULTS = pytest.mark.faults
ROOT = os.geteuid() == 0


def stored(store: Path) -> tuple[int, int]:
    """(runs, distinct keys) in a store, read as any reader would."""
    with Store(store, read_only=True) as s:
        return s.con.execute("SELECT count(*), count(DISTINCT key) FROM runs").fetchone()


def sweep(store: Path, values: str, seeds: str, *extra: str, duration: str = "100s") -> list[str]:
    """`slowstart sweep` of lfn-early-loss over initcwnd `values` and `seeds` into `store`
    (about a second a run here at 100 s simulated)."""
    return [
        sys.executable,
        "-m",
        "slowstart",
        "sweep",
        "lfn-early-loss",
        "--duration",
        duration,
        "--vary",
        f"flow.0.initcwnd={values}",
        "--seeds",
        seeds,
        "--store",
        str(store),
        "--quiet",
        *extra,
    ]


def test_results_and_report_read_a_store_while_a_sweep_writes_it(tmp_path: Path) -> None:
    """DuckDB lets one process open the file at a time; a sweep holds it only while it stores
    a batch, so readers wait a moment instead of failing (they failed with 'Could not set lock
    on file' for the whole sweep)."""
    store = tmp_path / "s.duckdb"
    writer = subprocess.Popen(
        sweep(store, "1,2,3,4,5,6", "1-2", "--jobs", "2", duration="50s"),
        stderr=subprocess.PIPE,
        text=True,
    )
    reads, seen = 0, [0]
    report = tmp_path / "report.html"
    while writer.poll() is None:
        if store.exists():
            rows = slowstart.results(store)
            runs = rows["key"].nunique() if len(rows) else 0
            assert runs >= seen[-1], seen  # a read never sees fewer runs than the one before
            seen.append(runs)
            reads += 1
            if reads == 2:
                r = subprocess.run(
                    [sys.executable, "-m", "slowstart", "report", str(store), "--out", str(report)],
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                assert r.returncode == 0, r.stderr
        time.sleep(0.2)
    assert writer.returncode == 0, writer.stderr.read() if writer.stderr else ""
    assert reads >= 2 and report.stat().st_size > 0
    assert stored(store) == (12, 12)


def test_two_sweeps_into_one_store_at_once_store_the_union(tmp_path: Path) -> None:
    """Both finish; a point both run is stored once; every point of either is there."""
    store = tmp_path / "s.duckdb"
    a = subprocess.Popen(sweep(store, "1,2,3,4", "1-2", "--jobs", "1", duration="15s"), stderr=-1)
    b = subprocess.Popen(sweep(store, "3,4,5,6", "1-2", "--jobs", "1", duration="15s"), stderr=-1)
    _, err_a = a.communicate(timeout=600)
    _, err_b = b.communicate(timeout=600)
    assert a.returncode == 0, err_a.decode()
    assert b.returncode == 0, err_b.decode()
    assert stored(store) == (12, 12)  # 6 values x 2 seeds, 4 of them in both sweeps


def progress_on_terminal(cmd: list[str]) -> tuple[subprocess.Popen, int]:
    import pty

    terminal, child_end = pty.openpty()
    try:
        proc = subprocess.Popen(cmd, stderr=child_end, stdout=subprocess.DEVNULL)
    finally:
        os.close(child_end)
    return proc, terminal


def read_counts(terminal: int, total: int, seconds: float) -> int | None:
    """The last "N/total runs" the sweep's progress bar showed within `seconds`."""
    import select

    seen, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([terminal], [], [], 0.05)
        if ready:
            try:
                seen += os.read(terminal, 65536)
            except OSError:
                break
    counts = re.findall(rf"(\d+)/{total} runs", seen.decode(errors="replace"))
    return int(counts[-1]) if counts else None


@FAULTS
def test_sigkill_while_a_sweep_stores_loses_no_run_it_reported(tmp_path: Path) -> None:
    """A sweep of short runs stores a batch every half second or so; SIGKILL it 10 times at
    moments that move through those writes. Each time every run its progress bar had counted
    is in the store, the file opens, and the next attempt runs only what is missing."""
    store = tmp_path / "s.duckdb"
    # 400 runs of 20 s simulated (some 0.2 s each), so batches are small and frequent.
    cmd = sweep(store, ",".join(map(str, range(1, 101))), "1-4", duration="20s")
    cmd.remove("--quiet")
    cmd += ["--jobs", "2"]
    kills = 0
    for delay in (2.0, 2.2, 2.4, 2.6, 2.8, 3.0, 3.2, 3.4, 3.6, 3.8):
        proc, terminal = progress_on_terminal(cmd)
        try:
            counted = read_counts(terminal, 400, delay)
            if proc.poll() is not None:
                break  # finished before the fault: nothing left to kill
            workers = children(proc.pid)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            kills += 1
            # Its pool's workers die with it (they idled forever, holding their memory).
            assert until(lambda w=workers: not any(alive(p) for p in w), 10), workers
        finally:
            os.close(terminal)
        runs, keys = stored(store)
        assert runs == keys, "a run stored twice"
        assert counted is None or runs >= counted, (counted, runs)
    assert kills >= 5, f"only {kills} kills landed before the sweep finished"
    print(f"faults: {kills} SIGKILLs, each with every counted run stored")
    done = subprocess.run([*cmd, "--quiet"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert stored(store) == (400, 400)


@FAULTS
def test_a_scheduler_that_does_not_answer_is_named_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once it is closed
    address = f"tcp://127.0.0.1:{port}"
    r = subprocess.run(
        [*sweep(tmp_path / "s.duckdb", "1,2", "1"), "--cluster", address],
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: --cluster {address}: no scheduler answered"), lines[0]


# --- make test-faults: minutes, or root ------------------------------------------------------


@contextlib.contextmanager
def small_tmpfs(size: str, options: str = "") -> Iterator[Path]:
    """A tmpfs of `size` mounted on a fresh folder (root only), unmounted at the end."""
    where = Path(tempfile.mkdtemp(prefix="slowstart-faults-"))
    opts = f"size={size}" + (f",{options}" if options else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        shutil.rmtree(where, ignore_errors=True)


needs_root = pytest.mark.skipif(
    not ROOT or shutil.which("mount") is None, reason="needs root to mount a small tmpfs"
)


@FAULTS
@needs_root
def test_a_disk_that_fills_under_the_store_is_one_line_and_the_store_opens(tmp_path) -> None:
    """A 6 MB filesystem under a store whose sweep keeps its traces: it fills mid-sweep. One
    line names the store and exit 2; the store opens after, with every batch it committed."""
    with small_tmpfs("6m") as disk:
        store = disk / "s.duckdb"
        r = subprocess.run(
            [*sweep(store, ",".join(map(str, range(1, 41))), "1-3", duration="30s"), "--traces"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert str(store) in lines[0] and "No space left on device" in lines[0], lines[0]
        runs, keys = stored(store)
        assert runs == keys and 0 < runs < 120, runs


@FAULTS
@needs_root
def test_a_store_on_a_read_only_mount_is_one_line(tmp_path) -> None:
    with small_tmpfs("4m", "ro") as disk:
        r = subprocess.run(
            sweep(disk / "s.duckdb", "1", "1"), capture_output=True, text=True, timeout=120
        )
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "s.duckdb" in lines[0] and "Read-only file system" in lines[0], lines[0]


def children(pid: int) -> list[int]:
    """Pids of the processes whose parent is `pid`."""
    found = []
    for p in Path("/proc").iterdir():
        with contextlib.suppress(OSError, IndexError, ValueError):
            if (
                p.name.isdigit()
                and int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid
            ):
                found.append(int(p.name))
    return found


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie has ended)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def until(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def dask_workers(pid: int) -> list[int]:
    """Pids of the Dask worker processes a LocalCluster in process `pid` spawned (beside them
    it has multiprocessing's resource tracker)."""
    found = []
    for child in children(pid):
        with contextlib.suppress(OSError):
            if b"spawn_main" in (Path("/proc") / str(child) / "cmdline").read_bytes():
                found.append(child)
    return found


@FAULTS
def test_a_dask_worker_sigkilled_mid_sweep_leaves_every_point_stored_once(tmp_path) -> None:
    """`--cluster local:2`: SIGKILL one worker process once runs are being stored; the nanny
    starts another, the scheduler gives its batch to a worker again, and the sweep ends with
    all 40 points stored once."""
    store = tmp_path / "s.duckdb"
    cmd = sweep(store, "1,2,3,4,5,6,7,8,9,10", "1-4", "--cluster", "local:2")
    cmd.remove("--quiet")
    proc, terminal = progress_on_terminal(cmd)
    try:
        counted = None
        deadline = time.monotonic() + 300
        while (counted is None or counted < 2) and time.monotonic() < deadline:
            counted = read_counts(terminal, 40, 1.0)
        assert counted is not None and counted < 40, counted
        workers = dask_workers(proc.pid)
        assert len(workers) == 2, workers
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + 600
        while proc.poll() is None and time.monotonic() < deadline:
            read_counts(terminal, 40, 1.0)  # drained, or the bar's writes would block it
        proc.wait(timeout=1)
    finally:
        os.close(terminal)
    assert proc.returncode == 0
    assert stored(store) == (40, 40)


def test_duckdb_is_what_the_store_tests_assume() -> None:
    """The lock message the store waits on (store.py `_connect`) is DuckDB's own."""
    with tempfile.TemporaryDirectory() as d:
        path = str(Path(d) / "x.duckdb")
        duckdb.connect(path).close()
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"import duckdb,time; c=duckdb.connect({path!r}); "
                "print('held', flush=True); time.sleep(30)",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            with pytest.raises(duckdb.IOException, match="Could not set lock"):
                duckdb.connect(path, read_only=True)
        finally:
            holder.kill()
            holder.wait()


def rss_kb(pid: int) -> int:
    for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@FAULTS
def test_a_10000_point_dask_sweep_keeps_the_drivers_memory_flat(tmp_path) -> None:
    """10 000 runs on `--cluster local:2` (satellite, 1 s simulated): the driver's resident
    memory grows less than 10% from the 1 000th stored run to the last, and the store holds
    every point once."""
    store = tmp_path / "s.duckdb"
    cmd = sweep(store, ",".join(map(str, range(1, 101))), "1-100", "--cluster", "local:2")
    cmd[cmd.index("lfn-early-loss")] = "satellite"
    cmd[cmd.index("--duration") + 1] = "1s"
    cmd.remove("--quiet")
    proc, terminal = progress_on_terminal(cmd)
    at_1000 = last = 0
    try:
        deadline = time.monotonic() + 3600
        while proc.poll() is None and time.monotonic() < deadline:
            counted = read_counts(terminal, 10000, 1.0)
            with contextlib.suppress(OSError):
                rss = rss_kb(proc.pid)
                if counted is not None and counted >= 1000 and not at_1000:
                    at_1000 = rss
                if counted is not None and counted < 10000:
                    last = rss
        proc.wait(timeout=60)
    finally:
        os.close(terminal)
    assert proc.returncode == 0
    assert stored(store) == (10000, 10000)
    growth = (last - at_1000) / at_1000
    print(f"faults: driver RSS {at_1000} kB at 1000 runs, {last} kB at the last, {growth:+.1%}")
    assert at_1000 > 0 and growth < 0.10


# --- a cluster of its own: a scheduler and workers started as a user would --------------------


class Cluster:
    """`dask scheduler` and `dask worker` processes on 127.0.0.1 (two single-threaded workers
    under one nanny each), as a user runs them; stopped at the end."""

    def __init__(self, memory_limit: str = "2GB") -> None:
        self.dask = str(Path(sys.executable).parent / "dask")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.memory_limit = memory_limit
        self.scheduler: subprocess.Popen | None = None
        self.workers: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.scheduler = subprocess.Popen(
            [self.dask, "scheduler", "--host", "127.0.0.1", "--port", str(self.port)]
            + ["--no-dashboard"],
            **quiet,
        )
        self.workers = subprocess.Popen(
            [self.dask, "worker", self.address, "--nworkers", "2", "--nthreads", "1"]
            + ["--memory-limit", self.memory_limit, "--no-dashboard"],
            **quiet,
        )
        self.client("c.wait_for_workers(2, timeout=120)")

    def client(self, code: str) -> str:
        """`code` run with `c`, a Dask client of this cluster, in a process of its own (a
        client in the test's process leaves its event loop's sockets to pytest); its stdout."""
        script = f"import distributed\nwith distributed.Client({self.address!r}) as c:\n"
        r = subprocess.run(
            [sys.executable, "-c", script + f"    {code}"],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert r.returncode == 0, r.stderr
        return r.stdout

    def stop(self) -> None:
        for p in (self.workers, self.scheduler):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


@contextlib.contextmanager
def cluster(memory_limit: str = "2GB") -> Iterator[Cluster]:
    c = Cluster(memory_limit)
    try:
        yield c
    finally:
        c.stop()


class Proxy:
    """A TCP relay from a port of its own to `target`; `drop()` cuts every connection it
    carries (as a network fault would) and goes on accepting new ones."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.carried: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self.listener.accept()
            except OSError:
                return
            far = socket.create_connection(self.target)
            with self.lock:
                self.carried += [near, far]
            for a, b in ((near, far), (far, near)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := a.recv(65536):
                b.sendall(data)
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        a.close()  # each socket is `a` of one of the two pipes

    def drop(self) -> None:
        with self.lock:
            for s in self.carried:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            self.carried.clear()

    def close(self) -> None:
        self.listener.close()
        with self.lock:
            carried = list(self.carried)
        self.drop()
        for s in carried:  # closed by their pipes once these see the shutdown
            until(lambda s=s: s.fileno() == -1, 5)


def runs_stored(store: Path) -> int:
    """Runs in `store` so far (0 before its first batch)."""
    if not store.exists():
        return 0
    with contextlib.suppress(Exception):  # a store still being created
        return stored(store)[0]
    return 0


# A controller that takes far more memory than its worker may use, on the run with initcwnd 7.
HOG = """
import slowstart


class Hog(slowstart.Controller):
    def __init__(self, **common):
        super().__init__(**common)
        self.window = 10 * self.mss
        if self.initcwnd == 7:
            self.ballast = bytearray(3 << 30)
            for i in range(0, len(self.ballast), 4096):
                self.ballast[i] = 1

    def on_ack(self, ev):
        self.window += ev.bytes_acked

    def on_congestion_event(self, ev):
        self.window = max(self.window // 2, 2 * self.mss)

    def on_rto(self, now, bytes_in_flight):
        self.window = self.mss

    def cwnd(self):
        return self.window
"""


@FAULTS
def test_a_point_that_runs_its_worker_out_of_memory_is_named_and_the_rest_finish(
    tmp_path: Path,
) -> None:
    """Workers limited to 600 MB; the run with initcwnd 7 takes 3 GB. Its nanny kills the
    worker each time (Dask gives up after 4), the batch holding it runs again point by point,
    and the sweep ends in one line naming that point; the 9 others are stored and the failure
    is in the store's `failed` table."""
    hog = tmp_path / "hog.py"
    hog.write_text(HOG)
    store = tmp_path / "s.duckdb"
    with cluster("600MB") as c:
        r = subprocess.run(
            [*sweep(store, "1,2,3,4,5,6,7,8,9,10", "1", duration="20s")]
            + ["--set", f"flow.0.cc={hog}:Hog", "--cluster", c.address],
            capture_output=True,
            text=True,
            timeout=600,
        )
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("error: 1 of 10 runs failed, e.g. flow.0.initcwnd=7, seed=1: "), (
        lines[0]
    )
    assert "workers died running it; out of memory?" in lines[0], lines[0]
    assert stored(store) == (9, 9)
    with Store(store, read_only=True) as s:
        failed = s.failed()
    assert len(failed) == 1 and '"flow.0.initcwnd": "7"' in failed["point"][0], failed
    listed = subprocess.run(
        [sys.executable, "-m", "slowstart", "results", str(store)], capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    named = [x for x in listed.stdout.splitlines() if x.startswith("failed: ")]
    assert len(named) == 1 and "out of memory?" in named[0], listed.stdout


@FAULTS
def test_a_worker_restarted_by_its_nanny_mid_sweep_leaves_every_point_stored_once(
    tmp_path: Path,
) -> None:
    """One worker restarted by its nanny (`Client.restart_workers`) once runs are stored: what
    it ran is run again, and the sweep ends with every point stored once."""
    store = tmp_path / "s.duckdb"
    with cluster() as c:
        proc = subprocess.Popen(
            [*sweep(store, "1,2,3,4,5,6,7,8,9,10", "1-4", duration="20s"), "--cluster", c.address],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert until(lambda: runs_stored(store) >= 2 or proc.poll() is not None, 300)
        assert proc.poll() is None, "the sweep ended before the fault"
        c.client("c.restart_workers([sorted(c.scheduler_info()['workers'])[0]])")
        _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert stored(store) == (40, 40)


@FAULTS
def test_a_dropped_connection_to_the_scheduler_is_survived(tmp_path: Path) -> None:
    """The sweep's client reaches the scheduler through a relay that cuts every connection
    mid-sweep: Dask cancels the client's tasks; the client reconnects, the sweep submits what
    was lost again and ends with every point stored once."""
    store = tmp_path / "s.duckdb"
    with cluster() as c:
        proxy = Proxy(("127.0.0.1", c.port))
        try:
            proc = subprocess.Popen(
                [*sweep(store, "1,2,3,4,5,6,7,8,9,10", "1-4", duration="20s")]
                + ["--cluster", f"tcp://127.0.0.1:{proxy.port}"],
                stderr=subprocess.PIPE,
                text=True,
            )
            assert until(lambda: runs_stored(store) >= 2 or proc.poll() is not None, 300)
            assert proc.poll() is None, "the sweep ended before the fault"
            proxy.drop()
            _, err = proc.communicate(timeout=600)
        finally:
            proxy.close()
    assert proc.returncode == 0, err
    assert stored(store) == (40, 40)


@FAULTS
def test_a_scheduler_that_dies_mid_sweep_is_one_line_and_the_rerun_finishes(
    tmp_path: Path,
) -> None:
    store = tmp_path / "s.duckdb"
    with cluster() as c:
        cmd = [*sweep(store, "1,2,3,4,5,6,7,8,9,10", "1-4", duration="20s")]
        cmd += ["--cluster", c.address]
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        assert until(lambda: runs_stored(store) >= 2 or proc.poll() is not None, 300)
        assert proc.poll() is None, "the sweep ended before the fault"
        assert c.scheduler is not None
        c.scheduler.kill()
        _, err = proc.communicate(timeout=300)
        lines = err.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, err
        assert lines[0].startswith(f"error: --cluster {c.address}: lost the scheduler mid-sweep")
        before = stored(store)
        assert before[0] == before[1] and 0 < before[0] < 40, before
        c.stop()
        c.start()
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert stored(store) == (40, 40)


@FAULTS
def test_a_1000_run_reproduce_swarm_interrupted_three_times_resumes_to_the_same_findings(
    tmp_path: Path,
) -> None:
    """`reproduce swarm` over 1 000 small swarms (125 seeds, two buffers, four population and
    stay settings), stopped by SIGTERM three times as its store fills and then run to the end:
    the same findings as the same command run once without a stop, and each run stored once."""

    def command(store: Path) -> list[str]:
        return [
            sys.executable,
            "-m",
            "slowstart",
            "reproduce",
            "swarm",
            "--seeds",
            "125",
            "--leechers",
            "10",
            "--buffers",
            "10,50",
            "--jobs",
            "2",
            "--quiet",
            "--json",
            "--store",
            str(store),
        ]

    resumed = tmp_path / "resumed.duckdb"
    for stop_at in (150, 400, 700):
        proc = subprocess.Popen(
            command(resumed), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert until(
            lambda n=stop_at, p=proc: runs_stored(resumed) >= n or p.poll() is not None, 900
        )
        assert proc.poll() is None, "it ended before the stop"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 128 + signal.SIGTERM, err
        runs, keys = stored(resumed)
        assert runs == keys and stop_at <= runs < 1000, (runs, keys)
    last = subprocess.run(command(resumed), capture_output=True, text=True, timeout=1800)
    assert last.returncode == 0, last.stderr
    assert stored(resumed) == (1000, 1000)

    once = tmp_path / "once.duckdb"
    whole = subprocess.run(command(once), capture_output=True, text=True, timeout=1800)
    assert whole.returncode == 0, whole.stderr
    found = json.loads(last.stdout)["swarm"]
    assert found["rows"] == json.loads(whole.stdout)["swarm"]["rows"]
    assert found["runs"] == 1000
