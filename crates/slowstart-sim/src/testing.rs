//! Config builders for tests: the `[path]` shape (sender, router, receiver) in code.

use slowstart_cc::CcSpec;

use crate::config::{
    AppConfig, DirectionConfig, DropSpec, FlowConfig, LinkConfig, LossDetection, QueueLimit,
    Recovery, SimConfig, TraceConfig,
};

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;

/// A flow with the scenario defaults (MSS 1460, initcwnd 10, delayed ACKs, ABC, PRR).
pub fn flow(cc: &str, size_bytes: Option<u64>) -> FlowConfig {
    FlowConfig {
        src: "sender".into(),
        dst: "receiver".into(),
        cc: CcSpec::named(cc),
        size_bytes,
        start_ns: 0,
        mss: 1460,
        header_bytes: 40,
        initcwnd: 10,
        initrwnd: 10,
        max_rwnd_bytes: None,
        max_window_bytes: None,
        handshake: true,
        delayed_ack: true,
        delack_timeout_ns: 40 * MS,
        ack_every: 2,
        quickack: false,
        abc: true,
        min_rto_ns: 200 * MS,
        max_rto_ns: 120 * SEC,
        pacing: false,
        recovery: Recovery::Prr,
        loss_detection: LossDetection::Rack,
        ecn: false,
        app: AppConfig::Bulk,
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
    let big = QueueLimit::Bytes(100_000_000);
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
                forward: DirectionConfig::lossless(10_000_000_000, 0, big),
                reverse: DirectionConfig::lossless(10_000_000_000, 0, big),
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
        trace: TraceConfig::default(),
        swarm: None,
    }
}
