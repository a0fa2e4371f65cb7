"""Program pairs through the emulated path (`[flow.program]`, python/slowstart/real/program.py)
and `slowstart shell`.

The runs need root (namespaces, TUN) and the programs `make programs` installs (Debian's curl,
ngtcp2-server and ngtcp2-client); elsewhere they are skipped, saying which is missing.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from conftest import NETWORK, built, cli
from slowstart.loading.scenario import load
from slowstart.real.program import check_programs, read_qlog
from slowstart.units import ScenarioError
from test_real import leftovers, needs_root

CURL = shutil.which("curl")
NGTCP2 = shutil.which("gtlsserver") and shutil.which("gtlsclient")
needs_curl = pytest.mark.skipif(CURL is None, reason="skipped: no curl (make programs)")
needs_ngtcp2 = pytest.mark.skipif(
    not NGTCP2, reason="skipped: no gtlsserver/gtlsclient (make programs: ngtcp2-server, -client)"
)

pytestmark = NETWORK


@pytest.fixture(scope="module")
def emu_built():
    yield from built("slowstart-emu")


PATH = """
duration = "{duration}"
[path]
rate = "20Mbps"
rtt = "50ms"
buffer = "1bdp"
"""
# Python's own HTTP server (the interpreter running the tests) and curl, fetching {file}.
HTTP_SERVER = f"{sys.executable} -m http.server --bind {{addr}} --directory {{dir}} {{port}}"
CURL_GET = "curl --silent --show-error --fail -o {out}/got http://{peer}:{port}/data"


def scenario(tmp_path, flows: list[tuple[str, str, str]], duration: str = "20s") -> str:
    """A 20 Mbps, 50 ms, 1-BDP path with one flow per (size, server, client)."""
    text = PATH.format(duration=duration)
    for size, server, client in flows:
        text += (
            f'[[flow]]\ncc = "cubic"\nsize = "{size}"\n[flow.program]\n'
            f"server = {json.dumps(server)}\nclient = {json.dumps(client)}\n"
        )
    path = tmp_path / "programs.toml"
    path.write_text(text)
    return str(path)


def test_a_program_table_is_checked_where_it_is_read():
    base = {"duration": "5s", "path": {"rate": "10Mbps", "rtt": "50ms"}}

    def flow(program: object) -> dict:
        return {**base, "flow": [{"size": "1MB", "program": program}]}

    ok = load(flow({"server": "srv --port {port}", "client": ["cli", "{peer}:{port}"]}))
    assert ok["flows"][0]["program"] == {
        "server": ["srv", "--port", "{port}"],
        "client": ["cli", "{peer}:{port}"],
    }
    for program, message in (
        ({"server": "srv"}, "flow.0.program.client: missing"),
        ({"server": "srv 'open", "client": "c"}, "flow.0.program.server: No closing quotation"),
        ({"server": "", "client": "c"}, "flow.0.program.server: expected a command line"),
        ({"server": "s", "client": "c", "shell": True}, "flow.0.program.shell: unknown key"),
        ({"server": "s", "client": "c", "port": 70000}, "flow.0.program.port: must be in 1"),
        ({"server": "s", "client": "c", "sends": "both"}, "expected one of server, client"),
        ({"server": "s {peer_addr}", "client": "c"}, "unknown placeholder {peer_addr}"),
    ):
        with pytest.raises((ScenarioError, ValueError), match=message):
            load(flow(program))


def test_program_flows_are_refused_before_anything_starts():
    base = {"duration": "5s", "path": {"rate": "10Mbps", "rtt": "50ms"}}
    program = {"server": "true", "client": "true"}
    for flows, message in (
        ([{"size": "1MB", "program": program}, {"size": "1MB"}], "flow.1.program: missing"),
        (
            [{"program": {"server": "no-such-program-here", "client": "true"}}],
            "flow.0.program.server: no-such-program-here: program not found",
        ),
        (
            [{"program": {"server": "gtlsserver-absent", "client": "true"}}],
            "program not found",
        ),
        ([{"program": {"server": "cat {file}", "client": "true"}}], "flow.0.size: {file} needs"),
        (
            [{"cc": "lss", "program": {"server": "true --cc={cc}", "client": "true"}}],
            "flow.0.cc: a program flow runs Linux's reno, cubic, bbr, bbr1",
        ),
        (
            [{"program": program}, {"program": {**program, "port": 5001}}],
            "flow.1.program.port: 5001 is flow 0's port too",
        ),
    ):
        with pytest.raises(ValueError, match=message):
            check_programs(load({**base, "flow": flows}))


def test_qlog_metrics_are_read_from_the_data_senders_trace(tmp_path):
    """ngtcp2's qlog 0.3 JSON-SEQ: the vantage point picks the file, `congestion_window`
    and the other metrics come with their times."""
    for vantage, cwnd in (("server", 14520), ("client", 9999)):
        head = {"qlog_format": "JSON-SEQ", "trace": {"vantage_point": {"type": vantage}}}
        events = [
            {"time": 0, "name": "transport:packet_sent", "data": {}},
            {"time": 3, "name": "recovery:metrics_updated", "data": {"congestion_window": cwnd}},
        ]
        text = "".join("\x1e" + json.dumps(r) + "\n" for r in [head, *events])
        (tmp_path / f"{vantage}.sqlog").write_text(text)
    rows = read_qlog(tmp_path, "server")
    assert [(r["t_ms"], r["congestion_window"]) for r in rows] == [(3.0, 14520)]


@needs_root
@needs_curl
def test_curl_fetches_a_file_through_the_emulated_path(tmp_path, emu_built):
    """curl against Python's HTTP server: every byte arrives, and the emulator's log and
    counters saw the transfer's packets on the flow's port."""
    out = tmp_path / "out"
    size = 2_000_000
    ran = cli(
        "real",
        scenario(tmp_path, [("2MB", HTTP_SERVER, CURL_GET)]),
        "--json",
        "--out",
        str(out),
    )
    assert ran.returncode == 0, ran.stderr
    s = json.loads(ran.stdout)
    f = s["flows"][0]
    assert (out / "flow0" / "client" / "got").stat().st_size == size
    # The payload crossed the link forward once at least (retransmissions add to it), the
    # requests and ACKs backward.
    assert size <= f["forward_payload_bytes"] < size * 1.2
    assert f["reverse_packets"] > 0
    # 2 MB at 20 Mbps is 0.8 s of serialisation, plus slow start's and the server's start.
    assert f["completion_s"] > 0.8
    import pandas as pd

    queues = pd.read_parquet(out / "queues.parquet")
    forward = queues[queues["link"] == "bottleneck"]
    # Every packet the link forwarded or dropped was logged as it entered the queue.
    link = s["links"][0]
    assert len(forward) == link["forwarded"] + link["drops"]
    assert link["forwarded"] >= f["forward_packets"] >= size / 1448
    assert s["tun_tx_dropped"] == {"sender": 0, "receiver": 0}
    assert leftovers(ran.pid) == []


# An upload: the client sends `{file}` over TCP to a server that writes what it reads.
RECEIVER = (
    "import socket, sys\n"
    "server = socket.create_server((sys.argv[1], int(sys.argv[2])))\n"
    "conn, _ = server.accept()\n"
    "with open(sys.argv[3], 'wb') as out:\n"
    "    while chunk := conn.recv(1 << 16):\n"
    "        out.write(chunk)\n"
)
# It writes the algorithm Linux gave its socket (TCP_CONGESTION), which it does not set.
SENDER = (
    "import socket, sys\n"
    "with socket.create_connection((sys.argv[1], int(sys.argv[2]))) as conn:\n"
    "    cc = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)\n"
    "    open(sys.argv[4], 'wb').write(cc.rstrip(b'\\0'))\n"
    "    conn.sendall(open(sys.argv[3], 'rb').read())\n"
)


@needs_root
@pytest.mark.parametrize("cc", ["reno", "cubic"])
def test_an_upload_runs_the_client_in_the_senders_namespace(tmp_path, emu_built, cc):
    """`sends = "client"`: the client's data crosses the bottleneck's forward direction, the
    server's ACKs the reverse one. A program's TCP runs the flow's algorithm: a namespace
    inherits bbr here, and its sysctl refuses cubic (the routes carry it)."""
    program = {
        "server": [sys.executable, "-c", RECEIVER, "{addr}", "{port}", "{out}/got"],
        "client": [sys.executable, "-c", SENDER, "{peer}", "{port}", "{file}", "{out}/cc"],
        "sends": "client",
        # sendall returns with the last bytes still on the path: the receiver's exit ends it.
        "ends": "both",
    }
    path = tmp_path / "upload.toml"
    path.write_text(
        PATH.format(duration="20s")
        + f'[[flow]]\ncc = "{cc}"\nsize = "1MB"\n[flow.program]\n'
        + "".join(f"{k} = {json.dumps(v)}\n" for k, v in program.items())
    )
    out = tmp_path / "out"
    ran = cli("real", str(path), "--json", "--out", str(out))
    assert ran.returncode == 0, ran.stderr
    f = json.loads(ran.stdout)["flows"][0]
    assert f["sender"] == "client"
    assert (out / "flow0" / "server" / "got").stat().st_size == 1_000_000
    assert f["forward_payload_bytes"] >= 1_000_000
    assert f["reverse_payload_bytes"] == 0  # ACKs only
    assert (out / "flow0" / "client" / "cc").read_text() == cc
    assert leftovers(ran.pid) == []


@needs_root
@needs_ngtcp2
def test_ngtcp2_over_quic_and_its_qlog_beside_the_simulation(tmp_path, emu_built):
    """gtlsserver and gtlsclient (QUIC, Debian's ngtcp2) move the file; the server's qlog
    becomes the flow trace, which agrees with the emulator, and `compare` overlays it on the
    simulation of the same path."""
    server = (
        "gtlsserver --quiet --cc={cc} --qlog-dir={qlog} --htdocs={dir} {addr} {port} {key} {cert}"
    )
    client = (
        "gtlsclient --quiet --exit-on-all-streams-close --cc={cc} --download={out} "
        "{peer} {port} https://{peer}:{port}/data"
    )
    path = scenario(tmp_path, [("2MB", server, client)])
    out = tmp_path / "out"
    ran = cli("real", path, "--cc", "reno", "--json", "--out", str(out))
    assert ran.returncode == 0, ran.stderr
    s = json.loads(ran.stdout)
    assert (out / "flow0" / "client" / "data").stat().st_size == 2_000_000
    assert s["flows"][0]["forward_payload_bytes"] >= 2_000_000
    import pandas as pd

    flows = pd.read_parquet(out / "flows.parquet")
    # ngtcp2's initial window: 10 datagrams of its 1452-byte maximum (ngtcp2_cc.c).
    assert flows["cwnd_bytes"].iloc[0] == 10 * 1452
    # The server's connection starts when the client's first packet has crossed the path
    # (25 ms one way); the client's own start-up comes before, well under a second.
    assert 0.025 <= flows["t_s"].iloc[0] < 1.0
    # 2 MB on a 1-BDP buffer overflows it in slow start: the link dropped packets, and the
    # sender's qlog shows the congestion event (its ssthresh set), two witnesses of one loss.
    assert s["links"][0]["drops"] > 0
    assert flows["ssthresh_bytes"].notna().any()
    assert leftovers(ran.pid) == []

    compared = cli("compare", path, "--cc", "reno", "--runs", "1", "--out", str(tmp_path))
    assert compared.returncode == 0, compared.stderr
    c = json.loads((tmp_path / "compare.json").read_text())
    assert c["stack"] == "program"
    assert c["real"][0]["flows"][0]["program"]["server"].startswith("gtlsserver --quiet --cc=reno")
    assert (tmp_path / "compare.png").exists()
    assert leftovers(compared.pid) == []


def _error_line(ran) -> str:
    lines = ran.stderr.strip().splitlines()
    assert ran.returncode == 2, ran.stderr
    assert len(lines) == 1, ran.stderr
    return lines[0]


@needs_root
def test_each_failure_is_one_line_and_leaves_nothing(tmp_path, emu_built):
    sh = shutil.which("sh")
    cases = [
        # The client fails: its status and its stderr's last lines.
        (
            [("1MB", HTTP_SERVER, f"{sh} -c 'echo one >&2; echo two >&2; exit 3'")],
            "20s",
            "error: flow 0's client (sh) exited with status 3: one | two",
        ),
        # Still running at the duration: its process group goes, with the namespaces.
        (
            [("1MB", HTTP_SERVER, f"{sh} -c 'sleep 60 & sleep 60'")],
            "2s",
            "error: flow 0's client (sh): still running at the scenario's duration (2 s); its "
            "process group was killed and the namespaces removed",
        ),
        # Flow 1's server binds flow 0's port.
        (
            [
                ("1MB", HTTP_SERVER, CURL_GET),
                ("1MB", HTTP_SERVER.replace("{port}", "5001"), CURL_GET),
            ],
            "20s",
            f"error: flow 1's server ({Path(sys.executable).name}): port in use: ",
        ),
        # A server that never listens says so rather than hang.
        (
            [("1MB", f"{sh} -c 'echo no port here >&2; exit 0'", CURL_GET)],
            "20s",
            "error: flow 0's server (sh) exited with status 0: no port here",
        ),
    ]
    for flows, duration, expected in cases:
        ran = cli("real", scenario(tmp_path, flows, duration))
        line = _error_line(ran)
        assert line.startswith(expected), line
        assert leftovers(ran.pid) == [], line


# Connects to a port nobody listens on at the far end: the refusal (RST) comes back after one
# round trip of the emulated path. Prints the seconds it took.
CONNECT = (
    "import socket, time\n"
    "t = time.monotonic()\n"
    "try:\n"
    "    socket.create_connection(('10.200.0.2', 9))\n"
    "except ConnectionRefusedError:\n"
    "    print(time.monotonic() - t)\n"
)


@needs_root
def test_shell_runs_a_command_across_the_emulated_path(tmp_path, emu_built):
    """`slowstart shell SCENARIO -- CMD`: CMD in the sender's namespace reaches the receiver's
    over the emulated path (a refused connection takes its 50 ms round trip), and its exit
    status is the command's."""
    path = tmp_path / "path.toml"
    path.write_text(PATH.format(duration="10s") + '[[flow]]\nsize = "1MB"\n')
    ran = cli("shell", str(path), "--", sys.executable, "-c", CONNECT)
    assert ran.returncode == 0, ran.stderr
    # At least the path's RTT; the margin is the namespaces' own time on a busy machine.
    assert 0.050 <= float(ran.stdout) < 0.5, ran.stdout
    assert "emulated link: bottleneck 1 packets, 0 drops" in ran.stderr
    failed = cli("shell", str(path), "--", "sh", "-c", "exit 7")
    assert failed.returncode == 7
    assert leftovers(ran.pid) == leftovers(failed.pid) == []
    missing = cli("shell", str(path), "--", "no-such-program-here")
    assert _error_line(missing) == "error: shell: no-such-program-here: program not found"
