//! The `[path]` shorthand's defaults (the loader expands a path into nodes and links).

/// The `[path]` shorthand's defaults, for the loader that expands it into nodes and links:
/// the bottleneck's buffer in multiples of its BDP, no loss or jitter, and the sender's access
/// link (10 Gbps with a 100 MB buffer, fast enough never to be the bottleneck).
#[derive(Clone, Copy, Debug)]
pub struct PathDefaults {
    pub buffer_bdp: u64,
    pub loss: f64,
    pub jitter_ns: u64,
    pub access_rate_bps: u64,
    pub access_buffer_bytes: u64,
}

pub const PATH_DEFAULTS: PathDefaults = PathDefaults {
    buffer_bdp: 1,
    loss: 0.0,
    jitter_ns: 0,
    access_rate_bps: 10_000_000_000,
    access_buffer_bytes: 100_000_000,
};
