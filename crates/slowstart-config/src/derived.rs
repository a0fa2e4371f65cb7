//! What a run derives from its config, in one place for the engine, the swarm and the UDP
//! stack: a component's random seed, a flow's controller parameters and its stall threshold.

use slowstart_cc::CommonParams;

use crate::FlowConfig;

/// Seed for component `index` of kind `salt`: SplitMix64 of the scenario seed, so every
/// component has its own random stream.
pub fn substream_seed(seed: u64, salt: u64, index: u64) -> u64 {
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
}
