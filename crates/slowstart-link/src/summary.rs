//! What a link reports at the end of a run, in the simulator's summary and the emulator's.

use serde::Serialize;

use crate::channel::Channel;

/// One link direction's counts, as the run summary's `links` rows.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkSummary {
    pub name: String,
    pub rate_bps: u64,
    pub forwarded: u64,
    pub drops: u64,
    pub max_queue_bytes: u64,
    pub max_queue_packets: u64,
    pub mean_queue_delay_s: f64,
    /// The queue discipline, when it is not drop-tail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<&'static str>,
    /// Packets marked Congestion Experienced, on directions with `ecn = true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marks: Option<u64>,
}

impl LinkSummary {
    pub fn of(c: &Channel) -> Self {
        LinkSummary {
            name: c.name.clone(),
            rate_bps: c.rate_bps,
            forwarded: c.stats.forwarded,
            drops: c.stats.drops,
            max_queue_bytes: c.stats.max_queue_bytes,
            max_queue_packets: c.stats.max_queue_packets,
            mean_queue_delay_s: if c.stats.forwarded > 0 {
                c.stats.total_wait_ns as f64 / c.stats.forwarded as f64 / 1e9
            } else {
                0.0
            },
            queue: (c.discipline != "droptail").then_some(c.discipline),
            marks: c.ecn.then_some(c.stats.marks),
        }
    }
}
