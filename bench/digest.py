"""One SHA-256 per case over a run's outputs, to show that a change left every output
byte-identical (the promise of "same scenario + seed, same bytes").

    .venv/bin/python bench/digest.py                 # print `case  sha256` lines
    .venv/bin/python bench/digest.py --out out/digest-main.txt
    .venv/bin/python bench/digest.py --check out/digest-main.txt   # exit 1 on any difference

Each case runs through the public API (`slowstart.run`) and hashes the summary (as JSON with
sorted keys, without `wall_s`) and every trace table (flows, queues, apps) written as CSV.
The cases cover every scenario under `scenarios/` except the `real-*` ones (they need the
network), shortened with `duration` or a smaller size where the full run takes long, each
queue discipline, a trace-driven link, cross traffic, a small swarm and every built-in
algorithm once. The whole set takes about half a minute. Not part of `make test`: a digest
is compared with an earlier one of the same code's ancestor, not with a number in a file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import slowstart

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"

# A scenario's run shortened to keep the whole digest fast: name -> keyword arguments of
# `slowstart.run`. Scenarios not named run as written.
SHORTENED: dict[str, dict[str, Any]] = {
    "careful-resume": {"duration": "10s"},
    "dctcp-fig17": {"duration": "1.2s"},
    "ledbat-alone": {"duration": "10s"},
    "ledbat-vs-reno": {"duration": "25s"},
    "lfn-early-loss": {"duration": "120s"},
    "net100-blast": {"duration": "5s"},
    "net100-lss": {"duration": "3s"},
    "net100-parallel": {"duration": "3s"},
    "net100-vegas-gamma": {"duration": "3s"},
    "slow-start-links": {"duration": "3s"},
    "swarm-adsl": {
        "set": ["swarm.leechers=40", "swarm.stop_after=20"],
    },
}


def short_path(**path: Any) -> dict[str, Any]:
    """A 20 Mbps, 40 ms path with one 4 MB Reno flow, for the queue and algorithm cases."""
    return {
        "name": "digest",
        "duration": "4s",
        "seed": 7,
        "path": {"rate": "20Mbps", "rtt": "40ms", "buffer": "0.5bdp", **path},
        "flow": [{"cc": "reno", "size": "4MB"}],
        "trace": {"flow_interval": "5ms", "queue_interval": "5ms"},
    }


def two_flows(**path: Any) -> dict[str, Any]:
    """Two flows sharing `short_path`'s bottleneck, the second starting 0.3 s later (a queue
    discipline with state per flow needs more than one)."""
    s = short_path(**path)
    s["flow"] = [
        {"cc": "cubic", "size": "4MB"},
        {"cc": "reno", "size": "3MB", "start": "300ms", "ecn": True},
    ]
    return s


def cases() -> list[tuple[str, str | dict[str, Any], dict[str, Any]]]:
    """(case name, scenario path or dict, keyword arguments of `slowstart.run`)."""
    out: list[tuple[str, str | dict[str, Any], dict[str, Any]]] = []
    for p in sorted(SCENARIOS.glob("*.toml")):
        if p.stem.startswith("real-"):
            continue
        out.append((p.stem, str(p), SHORTENED.get(p.stem, {})))
    # Floyd's early loss with delayed ACKs (as `reproduce floyd` also runs it).
    out.append(
        (
            "lfn-early-loss+delack",
            str(SCENARIOS / "lfn-early-loss.toml"),
            {"duration": "120s", "set": ["flow.0.delayed_ack=true"]},
        )
    )
    # A web page over several connections with keep-alive off (a reconnect per object).
    web = str(SCENARIOS / "web-initcwnd.toml")
    out.append(("web-objects", web, {"set": ["app.0.objects=3", "app.0.keep_alive=false"]}))
    for kind in ("codel", "fq_codel", "pie", "red", "dualpi2"):
        out.append((f"queue-{kind}", two_flows(queue=kind, ecn=True), {}))
    for trace in ("steps.txt", "cellular-walk.txt", "outages.txt"):
        s = short_path(rate={"trace": str(ROOT / "traces" / trace)})
        out.append((f"trace-{trace.removesuffix('.txt')}", s, {}))
    cross = short_path()
    cross["cross"] = [{"rate": "8Mbps", "kind": "onoff", "start": "500ms"}]
    out.append(("cross-onoff", cross, {}))
    out.append(("random-loss", short_path(loss=0.01), {}))
    bursty = short_path(loss={"p": "1%", "r": "25%"})
    out.append(("gilbert-elliott-loss", bursty, {}))
    for a in slowstart.algorithms():
        name = a["name"]
        out.append((f"cc-{name}", short_path(), {"cc": name}))
    return out


def digest(scenario: str | dict[str, Any], kwargs: dict[str, Any]) -> str:
    r = slowstart.run(scenario, **kwargs)
    h = hashlib.sha256()
    # The run's wall-clock time is the one field that is not the simulation's.
    summary = {k: v for k, v in r.summary.items() if k != "wall_s"}
    h.update(json.dumps(summary, sort_keys=True).encode())
    for name in ("flows", "queues", "apps"):
        h.update(f"\n--{name}\n".encode())
        h.update(getattr(r, name).to_csv(index=False).encode())
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the digests to this file")
    ap.add_argument("--check", help="compare with the digests in this file; exit 1 on a change")
    ap.add_argument("cases", nargs="*", help="only these cases (default: all)")
    args = ap.parse_args()
    lines = []
    start = time.monotonic()
    for name, scenario, kwargs in cases():
        if args.cases and name not in args.cases:
            continue
        t0 = time.monotonic()
        line = f"{name}  {digest(scenario, kwargs)}"
        print(f"{line}  ({time.monotonic() - t0:.1f} s)", file=sys.stderr)
        lines.append(line)
    print("\n".join(lines))
    print(f"{len(lines)} cases in {time.monotonic() - start:.0f} s", file=sys.stderr)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("\n".join(lines) + "\n")
    if args.check:
        expected = dict(line.split() for line in Path(args.check).read_text().splitlines())
        changed = [n for n, d in (line.split() for line in lines) if expected.get(n) != d]
        for n in changed:
            print(f"changed: {n}", file=sys.stderr)
        print(f"{len(lines) - len(changed)} of {len(lines)} identical", file=sys.stderr)
        return 1 if changed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
