"""The swarm study as data: the paper's published values and settings, one run's results
(`SwarmRun`) and every run of a reproduction (`Study`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.running.swarm_results import (
    SPELLING,
    add_counts,
    kept,
    peers_frame,
)

if TYPE_CHECKING:
    pass

mpl_figure = lazy.module("matplotlib.figure")
np = lazy.module("numpy")
pd = lazy.module("pandas")


# The paper's random-stay uplink queues (Fig. 2): mean packets per population, and the share of
# TCP samples above 100 packets.


# The paper's random-stay uplink queues (Fig. 2): mean packets per population, and the share of
# TCP samples above 100 packets.
PUBLISHED_QUEUE_MEANS = {"tcp": 52.0, "mixed": 34.0, "utp": 6.0}
PUBLISHED_TCP_ABOVE_100 = 0.20
# Uplink buffers of the paper's Fig. 3(b), packets, and 2 packets (24 ms at 1 Mbps): the
# paper's smallest, 10 packets, holds 120 ms, more than uTP's 25 ms target.
BUFFERS = (2, 10, 25, 50, 75, 100, 150, 200)
SEEDS = 10
SCENARIO = "swarm-adsl"
TITLE = "BitTorrent swarms over ADSL: uTP vs TCP completion time"
SOURCE = 'Testa and Rossi, "The impact of uTP on BitTorrent completion time" (IEEE P2P 2011)'


@dataclass(frozen=True)
class Setting:
    population: str  # canonical: tcp, utp, mixed
    seeding: str  # canonical: never_leave, random_stay
    buffer: int  # uplink buffer, packets

    def overrides(self) -> list[str]:
        return [
            f'swarm.population="{SPELLING.get(self.population, self.population)}"',
            f'swarm.seeding="{SPELLING.get(self.seeding, self.seeding)}"',
            f'swarm.buffer="{self.buffer}pkt"',
        ]


@dataclass
class SwarmRun:
    setting: Setting
    seed: int
    summary: dict[str, Any]
    queue_counts: np.ndarray  # uplink occupancy histogram over the measurement window
    wall_s: float = 0.0

    @property
    def peers(self) -> pd.DataFrame:
        return peers_frame(self.summary)


@dataclass
class Study:
    """Every run of a reproduction, with the rules it was measured by."""

    runs: list[SwarmRun]
    discard: int
    keep: int
    buffer: int  # the main settings' uplink buffer, packets
    buffers: tuple[int, ...]
    ms_per_packet: float
    target_s: float = 0.1  # the uTP transport's delay target
    wall_s: float = 0.0
    jobs: int = 1
    notes: list[str] = field(default_factory=list)

    def of(self, population: str, seeding: str, buffer: int | None = None) -> list[SwarmRun]:
        s = Setting(population, seeding, self.buffer if buffer is None else buffer)
        return [r for r in self.runs if r.setting == s]

    def downloads(
        self, population: str, seeding: str, buffer: int | None = None, transport: str | None = None
    ) -> pd.DataFrame:
        """The kept downloads of every repetition of a setting (a `seed` column added)."""
        frames = []
        for r in self.of(population, seeding, buffer):
            k = kept(r.peers, self.discard, self.keep).assign(seed=r.seed)
            frames.append(k if transport is None else k[k["transport"] == transport])
        if not frames:
            return peers_frame({"peers": []}).assign(seed=pd.Series(dtype=int))
        return pd.concat(frames, ignore_index=True)

    def queue_hist(self, population: str, seeding: str, buffer: int | None = None) -> np.ndarray:
        return add_counts(r.queue_counts for r in self.of(population, seeding, buffer))
