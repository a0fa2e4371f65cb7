//! A flow's application (`app`): bulk, web or BitTorrent, with defaults and bounds.

use super::*;

/// The application on a flow. Requests of `web` and `bittorrent` travel from `dst` back to
/// `src` on the connection's request stream (see `slowstart_transport::request`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppConfig {
    /// `src` writes `size_bytes` (or an endless stream) at once.
    #[default]
    Bulk,
    /// An HTTP/1.1-like client at `dst` fetching objects from the server at `src`.
    Web(WebConfig),
    /// A BitTorrent downloader at `dst` requesting 16 KiB blocks from a seed at `src`.
    Bittorrent(BittorrentConfig),
}

impl AppConfig {
    pub fn kind(&self) -> &'static str {
        match self {
            AppConfig::Bulk => "bulk",
            AppConfig::Web(_) => "web",
            AppConfig::Bittorrent(_) => "bittorrent",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebConfig {
    /// Request bytes (request line and headers), sent once per object.
    #[serde(default = "default_request_bytes")]
    pub request_bytes: u64,
    /// Response sizes, bytes; object `k` has size `response_bytes[k % len]`.
    pub response_bytes: Vec<u64>,
    /// Objects fetched one after the other; `None` for one per listed size.
    #[serde(default)]
    pub objects: Option<u64>,
    /// HTTP/1.1 persistent connection; without it each object has a connection of its own,
    /// opened when the previous object's last byte arrives.
    #[serde(default = "yes")]
    pub keep_alive: bool,
}

impl WebConfig {
    pub fn object_count(&self) -> u64 {
        self.objects.unwrap_or(self.response_bytes.len() as u64)
    }
}

/// libtorrent's request-queue policy (peer_connection.cpp `update_desired_queue_size`,
/// `second_tick`, `incoming_piece`; defaults from libtorrent 1.0 settings_pack).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BittorrentConfig {
    /// Block size requested at a time (BEP 3: 16 KiB).
    #[serde(default = "default_block_bytes")]
    pub block_bytes: u64,
    /// `request_queue_time`: seconds of download the queue should cover (3 s).
    #[serde(default = "default_queue_time_ns")]
    pub queue_time_ns: u64,
    /// Fewest requests kept outstanding (libtorrent `min_request_queue` = 2).
    #[serde(default = "default_min_queue")]
    pub min_queue: u64,
    /// Most requests kept outstanding (`max_out_request_queue`: 200 in 1.0, 500 from 1.1).
    #[serde(default = "default_max_queue")]
    pub max_queue: u64,
    /// libtorrent 1.0.6 request slow start: +1 target per block received.
    #[serde(default = "yes")]
    pub app_slow_start: bool,
    /// Leave request slow start when a second's download grew by no more than this over the
    /// previous second's, bytes (seed: 10 kB; libtorrent 1.1+ uses 5000).
    #[serde(default = "default_slow_start_threshold")]
    pub slow_start_threshold_bytes: u64,
    /// Blocks to download; `None` to keep downloading until the run ends.
    #[serde(default)]
    pub blocks: Option<u64>,
}

impl BittorrentConfig {
    /// libtorrent 2.0's settings (the real swarm's, python/slowstart/real/swarm.py):
    /// `max_out_request_queue` 500 and slow start left at 5000 bytes (peer_connection.cpp,
    /// `second_tick`); the rest as the defaults.
    pub fn libtorrent_2() -> Self {
        Self {
            max_queue: 500,
            slow_start_threshold_bytes: 5000,
            ..Self::default()
        }
    }
}

impl Default for BittorrentConfig {
    fn default() -> Self {
        Self {
            block_bytes: default_block_bytes(),
            queue_time_ns: default_queue_time_ns(),
            min_queue: default_min_queue(),
            max_queue: default_max_queue(),
            app_slow_start: true,
            slow_start_threshold_bytes: default_slow_start_threshold(),
            blocks: None,
        }
    }
}

pub(crate) fn default_request_bytes() -> u64 {
    400
}
fn default_block_bytes() -> u64 {
    16 * 1024
}
fn default_queue_time_ns() -> u64 {
    3_000_000_000
}
fn default_min_queue() -> u64 {
    2
}
fn default_max_queue() -> u64 {
    200
}
fn default_slow_start_threshold() -> u64 {
    10_000
}

/// Largest web request: it leaves as request packets at once.
pub const MAX_REQUEST_BYTES: u64 = 1_000_000;

/// Most objects one web flow may fetch (per-object results are kept for the summary).
pub const MAX_WEB_OBJECTS: u64 = 10_000_000;

pub(super) fn validate_app(i: usize, f: &FlowConfig) -> Result<(), SimError> {
    let at = format!("app.{i}");
    if !matches!(f.app, AppConfig::Bulk) && f.size_bytes.is_some() {
        return Err(err(format!(
            "flow.{i}.size: only for bulk flows; a {} app sets its own sizes (app.{i})",
            f.app.kind()
        )));
    }
    match &f.app {
        AppConfig::Bulk => {}
        AppConfig::Web(w) => {
            in_range(
                &format!("{at}.request"),
                w.request_bytes,
                1,
                MAX_REQUEST_BYTES,
            )?;
            if w.response_bytes.is_empty() {
                return Err(err(format!(
                    "{at}.response: at least one object size is needed"
                )));
            }
            if let Some(k) = w.response_bytes.iter().position(|&b| b == 0) {
                // One size is written without a list, so without an index.
                let field = match w.response_bytes.len() {
                    1 => format!("{at}.response"),
                    _ => format!("{at}.response.{k}"),
                };
                return Err(err(format!("{field}: must be > 0 bytes")));
            }
            let n = w.object_count();
            if n == 0 || n > MAX_WEB_OBJECTS {
                return Err(err(format!(
                    "{at}.objects: must be in 1..={MAX_WEB_OBJECTS}, got {n}"
                )));
            }
        }
        AppConfig::Bittorrent(b) => {
            if b.block_bytes == 0 || b.block_bytes > 1 << 24 {
                return Err(err(format!(
                    "{at}.block: must be in 1..=16777216 bytes, got {}",
                    b.block_bytes
                )));
            }
            if b.queue_time_ns == 0 {
                return Err(err(format!("{at}.queue_time: must be > 0 s")));
            }
            if b.min_queue == 0 {
                return Err(err(format!("{at}.min_queue: must be >= 1 request")));
            }
            if b.max_queue < b.min_queue || b.max_queue > 100_000 {
                return Err(err(format!(
                    "{at}.max_queue: must be in min_queue..=100000 ({}..=100000), got {}",
                    b.min_queue, b.max_queue
                )));
            }
            if b.blocks == Some(0) {
                return Err(err(format!(
                    "{at}.blocks: must be >= 1 or omitted (unbounded)"
                )));
            }
        }
    }
    Ok(())
}
