"""The real stacks `slowstart real` and `slowstart compare` run a scenario's flows on, in one
table: each stack's `--stack` word, who its runs are in a figure and a heading, the controllers
it accepts, how it runs a config and how the simulation beside it is sized. Adding a stack is
one entry in STACKS (docs/contributing.md, "Add a stack").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slowstart.real import bpf, kernel, program, quinn, testbed, udp
from slowstart.real.summary import HEADER_BYTES, MSS
from slowstart.running.api import Result
from slowstart.units import ScenarioError

Config = dict[str, Any]


@dataclass(frozen=True)
class Stack:
    """One real stack: `name` as --stack takes it, `label` who ran its runs in a figure's
    legend, `heading` what carried the flows in `slowstart real`'s table, `help` its line in
    --stack's help, `refuses(at, cc)` why it cannot run controller `cc` given at `at` (None if
    it can), `run(config, pcap, keep)` one real run, `like(config)` the config sized as the
    stack sends (the simulation beside it), `flow_settings` what `like` set and `mss` the
    segment size its cwnd is counted in."""

    name: str
    label: str
    heading: str
    help: str
    run: Callable[[Config, str | None, Path | None], Result]
    like: Callable[[Config], Config]
    flow_settings: dict[str, Any]
    mss: Callable[[Config], int]
    refuses: Callable[[str, str], str | None] = field(default=lambda at, cc: None)
    # A label read from the config instead of `label` (a program pair's: its server's program).
    label_of: Callable[[Config], str] | None = None
    # Chosen with --stack; the program pairs are chosen by the scenario itself.
    choosable: bool = True

    def who(self, config: Config) -> str:
        """The label of this stack's real runs of `config`."""
        return self.label if self.label_of is None else self.label_of(config)


def _servers(config: Config) -> str:
    return ", ".join(sorted({Path(f["program"]["server"][0]).name for f in config["flows"]}))


def kernel_like(config: Config) -> Config:
    """The config with every flow as the kernel runs it, for a like-for-like simulation:
    segments as Linux sends them over MTU 1500 (MSS 1448, 52 bytes of headers with
    timestamps), byte counting, since Linux 3.9 removed `net.ipv4.tcp_abc` and
    tcp_slow_start() grows cwnd by the segments each ACK covers, and the receiver's quick-ACK
    start (tcp_incr_quickack)."""
    return {**config, "flows": [{**f, **KERNEL_FLOW} for f in config["flows"]]}


KERNEL_FLOW = {"mss": MSS, "header_bytes": HEADER_BYTES, "abc": True, "quickack": True}


def _kernel_refuses(at: str, cc: str) -> str | None:
    if cc.split(":")[0] in testbed.LINUX_CC or bpf.is_bpf(cc):
        return None
    return (
        f"{at}: the kernel stack runs {', '.join(testbed.LINUX_CC)} or PATH.bpf.o, "
        f"got {cc!r} (--stack udp runs every algorithm)"
    )


def _quinn_native_refuses(at: str, cc: str) -> str | None:
    if cc.split(":")[0] in quinn.QUINN_CC:
        return None
    return (
        f"{at}: quinn's own controllers are {', '.join(quinn.QUINN_CC)}, got {cc!r} "
        "(--stack quinn runs every slowstart algorithm but ledbat and utp)"
    )


STACKS = {
    s.name: s
    for s in (
        Stack(
            name="kernel",
            label="Linux",
            heading="Linux TCP",
            help="Linux TCP",
            run=lambda config, pcap, keep: kernel.run_real(config, pcap=pcap),
            like=kernel_like,
            flow_settings=KERNEL_FLOW,
            mss=lambda config: MSS,
            refuses=_kernel_refuses,
        ),
        Stack(
            name="udp",
            label="UDP stack",
            heading="the simulator's transport over UDP",
            help="the simulator's own transport and controller over UDP sockets",
            run=lambda config, pcap, keep: udp.run_real_udp(config, pcap=pcap),
            like=udp.udp_like,
            flow_settings=udp.UDP_FLOW,
            mss=lambda config: udp.UDP_MSS,
        ),
        Stack(
            name="quinn",
            label="quinn",
            heading="quinn (QUIC) with slowstart's controller",
            help="the QUIC stack quinn with the controller through slowstart-quinn",
            run=lambda config, pcap, keep: quinn.run_real_quinn(config, "quinn", pcap=pcap),
            like=quinn.quic_like,
            flow_settings=quinn.QUIC_FLOW,
            mss=lambda config: quinn.QUIC_MSS,
        ),
        Stack(
            name="quinn-native",
            label="quinn's own cc",
            heading="quinn (QUIC) with its own controller",
            help="quinn with its own NewReno (reno), Cubic or BBR",
            run=lambda config, pcap, keep: quinn.run_real_quinn(config, "quinn-native", pcap=pcap),
            like=quinn.quic_like,
            flow_settings=quinn.QUIC_FLOW,
            mss=lambda config: quinn.QUIC_MSS,
            refuses=_quinn_native_refuses,
        ),
        # A program's packet sizes are its own: the simulation takes the scenario's (`mss`,
        # `header_bytes`), which a user sets to the program's.
        Stack(
            name="program",
            label="program pairs",
            heading="program pairs",
            help="each flow's [flow.program] pair",
            run=lambda config, pcap, keep: program.run_programs(config, pcap=pcap, keep=keep),
            like=lambda config: config,
            flow_settings={},
            mss=lambda config: int(config["flows"][0]["mss"]),
            label_of=_servers,
            choosable=False,
        ),
    )
}

# --stack's words, in order; the default first.
CHOICES = tuple(name for name, s in STACKS.items() if s.choosable)
DEFAULT = "kernel"
# `compare --stack both`: these two, each beside its own simulation.
BOTH = ("kernel", "udp")


def for_config(config: Config, chosen: str | None) -> Stack:
    """The stack that carries `config`'s flows: their [flow.program] pairs if they have them,
    else `chosen` (--stack), else the default. ScenarioError if --stack was given beside
    programs."""
    if program.has_programs(config):
        if chosen is not None:
            raise ScenarioError(
                "--stack: this scenario's flows are carried by their [flow.program] pairs, "
                "not a built-in stack"
            )
        return STACKS["program"]
    return STACKS[chosen or DEFAULT]
