//! What a run derives from its config, in one place for the engine, the swarm and the UDP
//! stack: a component's random seed, a flow's controller parameters and its stall threshold,
//! and what its connections are made from.

use slowstart_cc::CommonParams;
use slowstart_transport::ConnectionRecipe;

use crate::FlowConfig;

/// The random streams a run draws from, one per kind of component; the numbers are the salts
/// [`substream_seed`] mixes in, fixed so that a scenario and seed give the same run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeedStream {
    /// A link direction's loss and queue draws, per channel (topology, a swarm's access links).
    Channel = 1,
    /// A flow's controller (`CommonParams::seed`), in the engine, a swarm and the UDP stack.
    Controller = 2,
    /// A cross-traffic source's on/off draws, per source (the engine and the emulator).
    CrossSource = 3,
    /// A swarm's own draws: arrivals, access delays, tracker answers, how long a seed stays.
    Swarm = 10,
    /// A swarm peer's draws: the optimistic unchoke and piece picking.
    Peer = 11,
    /// Initial sequence numbers of exported captures, per flow and connection (export/tcp.rs).
    CaptureIsn = 0x7c9,
}

/// Seed for component `index` of `stream`: SplitMix64 of the scenario seed, so every component
/// has its own random stream.
pub fn substream_seed(seed: u64, stream: SeedStream, index: u64) -> u64 {
    let salt = stream as u64;
    let mut z =
        seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Payload bytes a path BDP holds: below it, a sender waiting on a window idles the link
/// (`Sender::set_stall_threshold`).
pub fn stall_threshold(bottleneck_bps: u64, base_rtt_ns: u64, mss: u64, header_bytes: u64) -> u64 {
    let bdp = bottleneck_bps as u128 * base_rtt_ns as u128 / 8_000_000_000;
    (bdp * mss as u128 / (mss + header_bytes) as u128).min(u64::MAX as u128) as u64
}

impl FlowConfig {
    /// What the flow's controller is built with; `seed` is its own (a [`substream_seed`] of the
    /// scenario's).
    pub fn common_params(&self, seed: u64) -> CommonParams {
        CommonParams {
            mss: self.mss,
            initcwnd: self.initcwnd,
            abc: self.abc,
            seed,
            paced: self.pacing,
        }
    }

    /// What flow `flow`'s connections are made from, its controller seeded with `seed`; no
    /// stall threshold (the driver that knows the path sets one).
    pub fn connection_recipe(&self, flow: u32, seed: u64) -> ConnectionRecipe {
        ConnectionRecipe {
            flow,
            settings: self.transport(),
            cc: self.cc.clone(),
            common: self.common_params(seed),
            stall_threshold: None,
            size_bytes: self.size_bytes,
        }
    }
}
