//! The `[trace]` table: how often flows and queues are sampled, and how many rows are kept.

use super::*;

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TraceConfig {
    /// Sample each flow's state at most once per this interval (0 = at every ACK).
    pub flow_interval_ns: u64,
    /// Sample each link's queue at most once per this interval (0 = at every change).
    pub queue_interval_ns: u64,
    /// Stop recording rows past this many (per table); the run itself continues.
    pub max_rows: u64,
}

impl Default for TraceConfig {
    fn default() -> Self {
        Self {
            flow_interval_ns: 0,
            queue_interval_ns: 0,
            max_rows: 2_000_000,
        }
    }
}

/// Most rows a trace table keeps, and fewest (decimation keeps every other row).
pub const MAX_TRACE_ROWS: u64 = 1_000_000_000;
pub const MIN_TRACE_ROWS: u64 = 2;

impl TraceConfig {
    pub(super) fn validate(&self) -> Result<(), SimError> {
        in_range(
            "trace.flow_interval",
            self.flow_interval_ns,
            0,
            MAX_DELAY_NS,
        )?;
        in_range(
            "trace.queue_interval",
            self.queue_interval_ns,
            0,
            MAX_DELAY_NS,
        )?;
        in_range(
            "trace.max_rows",
            self.max_rows,
            MIN_TRACE_ROWS,
            MAX_TRACE_ROWS,
        )
    }
}
