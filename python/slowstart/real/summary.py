"""What a real run measured, in the simulator's schema: the summary's rows and the traces'
columns under the names the core reports them (`_core.schema()`, crates/slowstart-sim/src/sim.rs
`schema_json`), so a real run reads like a simulated one.

Linux TCP's side is here too: TCP_INFO samples (and BBR's gains from TCP_CC_INFO), taken by the
sender every `flow_interval` (1 ms by default), become the flow trace and the flow rows. The
testbed's side, the emulator's queue log and statistics, become the queue trace, the link
rows and the cross-traffic rows of both stacks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.running.api import core_schema

if TYPE_CHECKING:  # numpy and pandas load when a run makes a frame: `slowstart list` needs neither
    import numpy as np
    import pandas as pd

np = lazy.module("numpy")
pd = lazy.module("pandas")


MSS = 1448  # MTU 1500 minus 20 (IP), 20 (TCP) and 12 (timestamp option)
HEADER_BYTES = 52
_CA_STATES = {0: "open", 1: "disorder", 2: "cwr", 3: "recovery", 4: "loss"}
PHASES = ["slow_start", "congestion_avoidance", "recovery", "startup", "drain", "probe_bw"]
PHASES += ["probe_rtt"]
# Linux tcp_bbr.c (BBR v1) gains in units of 256: STARTUP paces and sizes cwnd at
# bbr_high_gain = 256 * 2885 / 1000 + 1, DRAIN paces at 256 * 1000 / 2885 with the same
# cwnd gain, PROBE_BW keeps cwnd_gain 2 (512), PROBE_RTT runs both at 1 (256).
BBR_HIGH_GAIN = 256 * 2885 // 1000 + 1


def schema() -> dict[str, list[str]]:
    """The core's names (slowstart.running.api.core_schema)."""
    return core_schema()


def in_schema(kind: str, measured: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    """A summary row (`flow`, `link`) in the simulator's schema: every field of the core's row
    in its order, None where a real run does not measure it, then `extras`, what only a real
    run has. A measured name the core does not have is a bug here, and raises."""
    fields = schema()[kind]
    unknown = [k for k in measured if k not in fields]
    if unknown:
        raise RuntimeError(f"not in the simulator's {kind} summary: {', '.join(unknown)}")
    return {**{k: measured.get(k) for k in fields}, **extras}


def frame(kind: str, columns: dict[str, Any], extras: dict[str, Any]) -> pd.DataFrame:
    """A trace table (`flows`, `queues`) with the simulator's columns in its order, then
    `extras`; every column of the core's table must be measured."""
    return pd.DataFrame({**{c: columns[c] for c in schema()[kind]}, **extras})


def trace_frame(kind: str, columns: list[Any], extras: dict[str, Any]) -> pd.DataFrame:
    """A trace table (`flows`, `queues`) from its columns in the order the core declares them
    (crates/slowstart-config/src/trace.rs, named by `_core.schema()`), then `extras`. A count
    of columns other than the core's is a bug here, and raises."""
    names = schema()[kind]
    if len(columns) != len(names):
        raise RuntimeError(f"{kind}: {len(columns)} columns for the core's {', '.join(names)}")
    return pd.DataFrame({**dict(zip(names, columns, strict=True)), **extras})


def empty_trace(kind: str) -> pd.DataFrame:
    """A trace table with the core's columns and no row."""
    return trace_frame(kind, [[] for _ in schema()[kind]], {})


def flows_frame(trace: dict[str, Any], t0: int, flow_id: int, start_s: float) -> pd.DataFrame:
    """TCP_INFO samples → the simulator's flow trace; `t0` (the flow's actual start) is put
    at the flow's scenario `start_s`."""
    df = pd.DataFrame(trace["rows"], columns=trace["keys"])
    mss = df["snd_mss"].replace(0, MSS)
    ssthresh = df["snd_ssthresh"].astype(float)
    ssthresh[ssthresh >= 0x7FFFFFFF] = np.inf
    cwnd = df["snd_cwnd"].astype(np.uint64) * mss
    inflight = (df["unacked"] - df["sacked"] - df["lost"] + df["retrans"]).clip(lower=0) * mss
    in_ss = (df["ca_state"] == 0) & (df["snd_cwnd"] < df["snd_ssthresh"])
    phase = np.where(
        df["ca_state"] >= 3,
        "recovery",
        np.where(in_ss, "slow_start", "congestion_avoidance"),
    )
    if "bbr_cwnd_gain" in df and (df["bbr_cwnd_gain"] > 0).any():
        phase = _bbr_modes(df["bbr_pacing_gain"], df["bbr_cwnd_gain"])
    return trace_frame(
        "flows",
        [
            (df["t_ns"] - t0) / 1e9 + start_s,
            np.full(len(df), flow_id, dtype=np.uint32),
            cwnd.astype(np.uint64),
            ssthresh * mss,
            inflight.astype(np.uint64),
            df["rtt"] / 1e6,
            df["bytes_acked"].clip(lower=1).astype(np.uint64) - 1,
            pd.Categorical(phase, categories=PHASES),
        ],
        {
            "ca_state": df["ca_state"].map(_CA_STATES),
            "min_rtt_s": df["min_rtt"] / 1e6,
            "delivery_rate_bps": df["delivery_rate"] * 8.0,
            "total_retrans": df["total_retrans"],
        },
    )


def _bbr_modes(pacing: pd.Series, cwnd: pd.Series) -> np.ndarray:
    """BBR's mode from its gains (TCP_CC_INFO), named as the simulator's BBR phases. Before
    the first ACK the gains read 1 and 1; BBR is in STARTUP then (bbr_init)."""
    modes = np.select(
        [
            pacing == BBR_HIGH_GAIN,
            (pacing < 256) & (cwnd == BBR_HIGH_GAIN),
            (pacing == 256) & (cwnd == 256),
        ],
        ["startup", "drain", "probe_rtt"],
        "probe_bw",
    )
    started = np.flatnonzero(modes == "startup")
    modes[: started[0] if len(started) else 0] = "startup"
    return modes


def queues_frame(log: Path, t0: int) -> pd.DataFrame:
    """The emulator's queue log → the simulator's queue trace (the bottleneck's two
    directions), times from `t0`."""
    q = pd.read_csv(log)
    q = q[q["event"] != "deliver"] if len(q) else q
    return trace_frame(
        "queues",
        [
            (q["t_ns"] - t0) / 1e9,
            pd.Categorical(
                q["dir"].map({"forward": "bottleneck", "reverse": "bottleneck:reverse"})
            ),
            q["queue_bytes"].astype(np.uint64),
            q["queue_packets"].astype(np.uint64),
        ],
        {},
    ).reset_index(drop=True)


def kernel_summary(
    config: dict[str, Any],
    flows: pd.DataFrame,
    runs: list[dict[str, Any]],
    stats: dict[str, Any],
) -> dict[str, Any]:
    """A Linux TCP run's summary: per flow what its endpoints reported and its TCP_INFO trace
    shows; web objects as the simulator's web app reports them; the emulated link's rows."""
    rows, apps, warnings = [], [], []
    for i, r in enumerate(runs):
        flow, rep, t0 = r["flow"], r["report"], r["t0"]
        f = flows[flows["flow"] == i]
        late = (t0 - r["start_at"]) / 1e9
        if late > 0.005:
            warnings.append(f"flow {i} started {late * 1e3:.1f} ms late")
        if r["web"]:
            objs = rep["objects"]
            delivered = sum(o["bytes"] for o in objs)
            last = objs[-1]["last_ns"] if objs else None
            first = objs[0]["first_ns"] if objs else None
            apps.append(
                {
                    "flow": i,
                    "kind": "web",
                    "request_bytes": r["web"]["request_bytes"],
                    "objects_requested": len(objs),
                    "objects_completed": len(objs),
                    "objects": [
                        {
                            "bytes": o["bytes"],
                            "ttfb_s": (o["first_ns"] - o["wanted_ns"]) / 1e9,
                            "first_to_last_s": (o["last_ns"] - o["first_ns"]) / 1e9,
                            "total_s": (o["last_ns"] - o["wanted_ns"]) / 1e9,
                        }
                        for o in objs
                    ],
                }
            )
        else:
            delivered, last, first = rep["bytes"], rep["last_ns"], rep["first_ns"]
        completion = (last - t0) / 1e9 if last else None
        active = completion or None
        not_ss = f[~f["phase"].isin(schema()["initial_phases"])]
        ss_exit = float(not_ss["t_s"].iloc[0]) - flow["start_ns"] / 1e9 if len(not_ss) else None
        rows.append(
            in_schema(
                "flow",
                {
                    "id": i,
                    "cc": flow["cc"]["name"],
                    "size_bytes": flow["size_bytes"],
                    "bytes_delivered": delivered,
                    "completion_s": completion,
                    "goodput_bps": delivered * 8 / active if active else None,
                    "slow_start_exit_s": ss_exit,
                    "retransmits": int(f["total_retrans"].iloc[-1]) if len(f) else 0,
                    "loss_events": recoveries(f["ca_state"]),
                    "max_cwnd_bytes": int(f["cwnd_bytes"].max()) if len(f) else 0,
                },
                {
                    "first_byte_s": (first - t0) / 1e9 if first else None,
                    "cwnd_at_exit_bytes": cwnd_at(
                        f, None if ss_exit is None else ss_exit + flow["start_ns"] / 1e9
                    ),
                    "mss": MSS,
                    "initcwnd": flow["initcwnd"],
                    "initrwnd": flow["initrwnd"],
                    "start_late_s": late,
                },
            )
        )
    warnings.extend(tun_warnings(stats))
    warnings.extend(cross_warnings(stats))

    return {
        "scenario": config.get("name"),
        "mode": "real",
        "seed": config.get("seed", 0),
        "flows": rows,
        "links": link_rows(config, stats),
        "apps": apps,
        **cross_rows(stats),
        "tun_tx_dropped": stats.get("tun_tx_dropped", {}),
        "warnings": warnings,
    }


def recoveries(ca_state: pd.Series) -> int:
    """Loss events as the simulator counts them (fast-recovery episodes): how often the
    sampled TCP_INFO ca_state enters TCP_CA_Recovery (tcp_enter_recovery). An episode lasts
    at least a round trip, so 1 ms samples see every one."""
    state = ca_state.astype(str)
    return int(((state == "recovery") & (state.shift() != "recovery")).sum())


def tun_warnings(stats: dict[str, Any]) -> list[str]:
    """One line per TUN device that dropped packets before the emulator saw them."""
    return [
        f"the {side}'s TUN device dropped {n} packets before the emulator saw them "
        "(losses outside the emulated link)"
        for side, n in stats.get("tun_tx_dropped", {}).items()
        if n
    ]


def cross_rows(stats: dict[str, Any]) -> dict[str, Any]:
    """`{"cross": rows}` with the emulator's cross sources, each the simulator's own row
    (`CrossSummary`, crates/slowstart-link/src/cross.rs) then `send_late_mean_us` and
    `send_late_max_us`, how late its packets reached the link; `{}` without any, as a
    simulated summary leaves `cross` out. A source sends until the emulator stops, just after
    the last flow (a simulation ends with it), and its rate is over that time."""
    rows = stats.get("cross") or []
    return {"cross": rows} if rows else {}


# A cross packet more than 1 ms late into the link (the emulator's loop busy past its send
# time) is worth a warning; the tests see at most tens of microseconds.
CROSS_LATE_WARN_US = 1000.0


def cross_warnings(stats: dict[str, Any]) -> list[str]:
    """One line per cross source whose packets reached the link late."""
    return [
        f"cross source {c['id']}: packets reached the emulated link up to "
        f"{c['send_late_max_us'] / 1e3:.1f} ms after their send time"
        for c in stats.get("cross") or []
        if c["send_late_max_us"] > CROSS_LATE_WARN_US
    ]


def link_rows(config: dict[str, Any], stats: dict[str, Any]) -> list[dict[str, Any]]:
    """The bottleneck's two directions: the emulator reports each as the simulator's own link
    row (queue discipline and ECN marks included); only the names are the scenario's."""
    return [
        in_schema("link", {**stats.get(direction, {}), "name": name}, {})
        for name, direction in (("bottleneck", "forward"), ("bottleneck:reverse", "reverse"))
    ]


def cwnd_at(flows: pd.DataFrame, t: float | None) -> int | None:
    """cwnd just before `t` (the largest slow-start cwnd when exit is the first loss)."""
    if t is None or not len(flows):
        return None
    before = flows[flows["t_s"] < t]
    return int(before["cwnd_bytes"].max()) if len(before) else None
