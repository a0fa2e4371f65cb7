//! Config builders for tests: the `[path]` shape (sender, router, receiver) in code.

use slowstart_cc::CcSpec;

use crate::config::{
    DirectionConfig, DropSpec, FlowConfig, LinkConfig, QueueLimit, SimConfig, TraceConfig,
    PATH_DEFAULTS,
};

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;

/// A flow from sender to receiver with every default of [`FlowConfig`].
pub fn flow(cc: &str, size_bytes: Option<u64>) -> FlowConfig {
    FlowConfig {
        cc: CcSpec::named(cc),
        size_bytes,
        ..FlowConfig::new("sender", "receiver")
    }
}

/// sender —(10 Gbps access)— router —(bottleneck, rtt/2 each way)— receiver.
pub fn path(
    rate_bps: u64,
    rtt_ns: u64,
    buffer: QueueLimit,
    flows: Vec<FlowConfig>,
    drops: Vec<DropSpec>,
) -> SimConfig {
    let mut forward = DirectionConfig::lossless(rate_bps, rtt_ns / 2, buffer);
    forward.drops = drops;
    let big = QueueLimit::Bytes(PATH_DEFAULTS.access_buffer_bytes);
    let access = PATH_DEFAULTS.access_rate_bps;
    SimConfig {
        name: "test".into(),
        seed: 1,
        duration_ns: 60 * SEC,
        nodes: vec!["sender".into(), "router".into(), "receiver".into()],
        links: vec![
            LinkConfig {
                name: "access".into(),
                a: "sender".into(),
                b: "router".into(),
                forward: DirectionConfig::lossless(access, 0, big),
                reverse: DirectionConfig::lossless(access, 0, big),
            },
            LinkConfig {
                name: "bottleneck".into(),
                a: "router".into(),
                b: "receiver".into(),
                forward,
                reverse: DirectionConfig::lossless(rate_bps, rtt_ns / 2, buffer),
            },
        ],
        flows,
        cross: vec![],
        trace: TraceConfig::default(),
        run_to_end: false,
        swarm: None,
    }
}
