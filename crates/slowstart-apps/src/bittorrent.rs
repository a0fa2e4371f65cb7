//! BitTorrent peer-wire request pipelining on one connection (BEP 3; libtorrent seed).
//!
//! The downloader at `dst` keeps a queue of outstanding block requests; the seed at `src`
//! answers each 17-byte request with a piece message (13 header bytes and the block), in order,
//! as soon as it arrives: the seed's sending is limited by what was requested. The size of the
//! queue is [`RequestQueue`], libtorrent's policy (peer_connection.cpp):
//!
//! - `update_desired_queue_size`: target = download_rate × `request_queue_time` / block size,
//!   clamped to [min, max] — outside slow start only.
//! - `second_tick`, once a second: the download rate is a 5-second low-pass average (stat.cpp:
//!   `avg = avg * 4/5 + sample / 5`), so the target moves in one-second steps and lags (the
//!   stalls of the seed's Figure 1).
//! - `incoming_piece`, libtorrent 1.0.6 slow start: target += 1 per block received; it ends at
//!   a tick when the bytes of this second exceed last second's by no more than a threshold
//!   (seed: 10 kB/s; `m_downloaded_last_second + 5000 >= last_payload_downloaded()` in 1.1+).
//!
//! The connection opens as libtorrent's does: the downloader sends the handshake (68 bytes, BEP
//! 3) once connected; the seed answers with its handshake and `have_all` (BEP 6); the
//! downloader, now knowing the seed has what it wants, sends `interested`; the seed, with a free
//! upload slot, answers `unchoke`; only then do requests flow: two round trips after the
//! transport's handshake. The once-a-second tick is session-wide, at whole seconds of simulated
//! time, not aligned with the connection. Not modelled: the seed's disk reads and send-buffer
//! watermark (`send_buffer_watermark`), choking, piece picking, request timeouts and snubbing.
//! The download rate counts payload bytes as they arrive in order, as libtorrent counts them
//! off the socket.

use serde::Serialize;
use slowstart_transport::request::RequestSender;
use slowstart_transport::Timer;

use crate::{seconds, Ctx};
use slowstart_config::trace::AppRow;
use slowstart_config::BittorrentConfig;

/// BEP 3 handshake: pstrlen, "BitTorrent protocol", 8 reserved bytes, info hash, peer id.
pub const HANDSHAKE_BYTES: u64 = 1 + 19 + 8 + 20 + 20;
/// A message without payload: 4-byte length prefix and 1-byte id (interested, unchoke,
/// have_all).
pub const BARE_MESSAGE_BYTES: u64 = 5;
/// `have`: length prefix, id, index.
pub const HAVE_BYTES: u64 = 4 + 1 + 4;
/// `request` (and `cancel`): length prefix, id, index, begin, length.
pub const REQUEST_BYTES: u64 = 4 + 1 + 12;
/// `piece` header before the block: length prefix, id, index, begin.
pub const PIECE_HEADER_BYTES: u64 = 4 + 1 + 8;
/// Downloader's opening: handshake, then `interested`.
pub const DOWNLOADER_OPENING: u64 = HANDSHAKE_BYTES + BARE_MESSAGE_BYTES;
/// Seed's opening: handshake and `have_all`, then `unchoke`.
pub const SEED_OPENING: u64 = HANDSHAKE_BYTES + 2 * BARE_MESSAGE_BYTES;
/// libtorrent `m_desired_queue_size(4)` in the peer_connection constructor.
pub const INITIAL_TARGET: u64 = 4;
/// libtorrent ticks peers once a second (`second_tick`).
pub const TICK_NS: u64 = 1_000_000_000;

/// libtorrent's request-queue controller for one peer: events in, target queue size out.
#[derive(Clone, Debug)]
pub struct RequestQueue {
    block_bytes: u64,
    queue_time_ns: u64,
    min: u64,
    max: u64,
    threshold: u64,
    target: u64,
    slow_start: bool,
    /// `download_payload_rate()`, bytes per second.
    rate: u64,
    /// Payload bytes since the last tick (`last_payload_downloaded()`).
    this_second: u64,
    /// `m_downloaded_last_second`.
    last_second: u64,
}

impl RequestQueue {
    pub fn new(cfg: &BittorrentConfig) -> Self {
        RequestQueue {
            block_bytes: cfg.block_bytes,
            queue_time_ns: cfg.queue_time_ns,
            min: cfg.min_queue,
            max: cfg.max_queue,
            threshold: cfg.slow_start_threshold_bytes,
            target: INITIAL_TARGET.clamp(cfg.min_queue, cfg.max_queue),
            slow_start: cfg.app_slow_start,
            rate: 0,
            this_second: 0,
            last_second: 0,
        }
    }

    /// Requests to keep outstanding.
    pub fn target(&self) -> u64 {
        self.target
    }

    /// Download rate estimate, bytes per second.
    pub fn rate(&self) -> u64 {
        self.rate
    }

    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    /// Payload bytes arrived.
    pub fn on_payload(&mut self, bytes: u64) {
        self.this_second += bytes;
    }

    /// A whole block arrived (`incoming_piece`).
    pub fn on_block(&mut self) {
        if self.slow_start {
            self.target += 1;
        }
        self.update();
    }

    /// The once-a-second tick, `interval_ns` after the previous one (`second_tick`). Returns
    /// true when request slow start ended at this tick.
    pub fn on_tick(&mut self, interval_ns: u64) -> bool {
        let mut left = false;
        if self.slow_start
            && self.last_second > 0
            && self.last_second + self.threshold >= self.this_second
        {
            self.slow_start = false;
            left = true;
        }
        self.last_second = self.this_second;
        let sample = (self.this_second as u128 * 1_000_000_000 / interval_ns.max(1) as u128) as u64;
        self.rate = self.rate * 4 / 5 + sample / 5;
        self.this_second = 0;
        self.update();
        left
    }

    /// `update_desired_queue_size`.
    fn update(&mut self) {
        if !self.slow_start {
            self.target = (self.queue_time_ns as u128 * self.rate as u128
                / (1_000_000_000u128 * self.block_bytes as u128)) as u64;
        }
        self.target = self.target.clamp(self.min, self.max);
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct BittorrentSummary {
    pub block_bytes: u64,
    pub blocks_requested: u64,
    pub blocks_received: u64,
    pub outstanding_max: u64,
    pub target_queue_max: u64,
    pub target_queue_final: u64,
    pub download_rate_final_bps: u64,
    pub app_slow_start: bool,
    /// When request slow start ended (from the flow start); `None` if it never did or was off.
    pub app_slow_start_exit_s: Option<f64>,
    pub request_packets: u64,
    pub request_timeouts: u64,
    /// Time from the flow start to the last block, when `blocks` was given and all arrived.
    pub completion_s: Option<f64>,
}

pub struct BittorrentApp {
    app_slow_start: bool,
    blocks: Option<u64>,
    message_bytes: u64,
    block_bytes: u64,
    pub queue: RequestQueue,
    start_ns: u64,
    pub tick: Timer,
    last_tick_ns: u64,
    // Downloader (`dst`).
    interested: bool,
    unchoked: bool,
    requested: u64,
    received: u64,
    delivered: u64,
    // Seed (`src`).
    greeted: bool,
    unchoke_sent: bool,
    answered: u64,
    // Statistics.
    outstanding_max: u64,
    target_max: u64,
    slow_start_exit_ns: Option<u64>,
    done_ns: Option<u64>,
    changed: bool,
    /// The tick changed the rate: its row is recorded whatever the sampling interval.
    ticked: bool,
}

impl BittorrentApp {
    pub fn new(cfg: &BittorrentConfig, start_ns: u64) -> Self {
        let queue = RequestQueue::new(cfg);
        BittorrentApp {
            app_slow_start: cfg.app_slow_start,
            blocks: cfg.blocks,
            message_bytes: PIECE_HEADER_BYTES + cfg.block_bytes,
            block_bytes: cfg.block_bytes,
            target_max: queue.target(),
            queue,
            start_ns,
            tick: Timer::default(),
            last_tick_ns: start_ns,
            interested: false,
            unchoked: false,
            requested: 0,
            received: 0,
            delivered: 0,
            greeted: false,
            unchoke_sent: false,
            answered: 0,
            outstanding_max: 0,
            slow_start_exit_ns: None,
            done_ns: None,
            changed: true,
            ticked: false,
        }
    }

    pub fn outstanding(&self) -> u64 {
        self.requested - self.received
    }

    /// Payload (block) bytes within the first `upto` bytes of the seed's stream.
    fn payload_upto(&self, upto: u64) -> u64 {
        let Some(y) = upto.checked_sub(SEED_OPENING) else {
            return 0;
        };
        let whole = y / self.message_bytes;
        let part = y % self.message_bytes;
        whole * self.block_bytes + part.saturating_sub(PIECE_HEADER_BYTES)
    }

    pub fn on_start(&mut self, ctx: &mut Ctx) {
        self.last_tick_ns = ctx.now;
        // Session ticks fall on whole seconds of simulated time.
        self.tick.set(Some((ctx.now / TICK_NS + 1) * TICK_NS));
    }

    pub fn on_established(&mut self, ctx: &mut Ctx) {
        ctx.request(HANDSHAKE_BYTES);
    }

    /// Seed: answer the handshake and `interested`, then every request with its piece, in order.
    pub fn on_requests(&mut self, upto: u64, ctx: &mut Ctx) {
        if upto >= HANDSHAKE_BYTES && !self.greeted {
            self.greeted = true;
            ctx.sender.write(HANDSHAKE_BYTES + BARE_MESSAGE_BYTES);
        }
        if upto < DOWNLOADER_OPENING {
            return;
        }
        if !self.unchoke_sent {
            self.unchoke_sent = true;
            ctx.sender.write(BARE_MESSAGE_BYTES);
        }
        let requests = (upto - DOWNLOADER_OPENING) / REQUEST_BYTES;
        if requests > self.answered {
            ctx.sender
                .write((requests - self.answered) * self.message_bytes);
            self.answered = requests;
        }
    }

    /// Downloader: count payload, complete blocks, keep the queue at its target.
    pub fn on_delivered(&mut self, upto: u64, ctx: &mut Ctx) {
        let payload = self.payload_upto(upto) - self.payload_upto(self.delivered);
        self.queue.on_payload(payload);
        self.delivered = upto;
        if !self.interested && upto >= HANDSHAKE_BYTES + BARE_MESSAGE_BYTES {
            self.interested = true;
            ctx.request(BARE_MESSAGE_BYTES);
        }
        if !self.unchoked && upto >= SEED_OPENING {
            self.unchoked = true;
            self.changed = true;
        }
        while self.received < self.requested
            && upto >= SEED_OPENING + (self.received + 1) * self.message_bytes
        {
            self.received += 1;
            self.queue.on_block();
            self.changed = true;
        }
        if self.blocks == Some(self.received) && self.done_ns.is_none() {
            self.done_ns = Some(ctx.now);
        }
        if self.unchoked {
            self.request_more(ctx);
        }
    }

    /// libtorrent `send_block_requests`: request until `target` are outstanding.
    fn request_more(&mut self, ctx: &mut Ctx) {
        let target = self.queue.target();
        let mut wanted = target.saturating_sub(self.outstanding());
        if let Some(total) = self.blocks {
            wanted = wanted.min(total - self.requested);
        }
        if wanted > 0 {
            self.requested += wanted;
            ctx.request(wanted * REQUEST_BYTES);
            self.changed = true;
        }
        self.outstanding_max = self.outstanding_max.max(self.outstanding());
        self.target_max = self.target_max.max(target);
    }

    /// libtorrent `second_tick`.
    pub fn on_tick(&mut self, ctx: &mut Ctx) {
        let interval = ctx.now - self.last_tick_ns;
        self.last_tick_ns = ctx.now;
        if self.queue.on_tick(interval) {
            self.slow_start_exit_ns = Some(ctx.now);
        }
        self.target_max = self.target_max.max(self.queue.target());
        self.changed = true;
        self.ticked = true;
        if !self.finished() {
            self.tick.set(Some(ctx.now + TICK_NS));
        }
    }

    pub fn finished(&self) -> bool {
        self.done_ns.is_some()
    }

    /// A series row if the queue changed since the last one, and whether it must be kept
    /// (a tick's row, so the once-a-second steps show at their time).
    pub fn take_row(&mut self, now: u64, flow: u32) -> Option<(AppRow, bool)> {
        if !self.changed {
            return None;
        }
        self.changed = false;
        let forced = std::mem::take(&mut self.ticked);
        let row = AppRow {
            t_ns: now,
            flow,
            outstanding_requests: self.outstanding(),
            target_queue: self.queue.target(),
            download_rate_bps: self.queue.rate() * 8,
        };
        Some((row, forced))
    }

    pub fn summary(&self, requests: &RequestSender) -> BittorrentSummary {
        BittorrentSummary {
            block_bytes: self.block_bytes,
            blocks_requested: self.requested,
            blocks_received: self.received,
            outstanding_max: self.outstanding_max,
            target_queue_max: self.target_max,
            target_queue_final: self.queue.target(),
            download_rate_final_bps: self.queue.rate() * 8,
            app_slow_start: self.app_slow_start,
            app_slow_start_exit_s: self.slow_start_exit_ns.map(|t| seconds(t - self.start_ns)),
            request_packets: requests.packets_sent(),
            request_timeouts: requests.timeouts(),
            completion_s: self.done_ns.map(|t| seconds(t - self.start_ns)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(slow_start: bool) -> BittorrentConfig {
        BittorrentConfig {
            app_slow_start: slow_start,
            ..Default::default()
        }
    }

    const BLOCK: u64 = 16 * 1024;

    #[test]
    fn rate_is_a_five_second_low_pass_updated_only_at_ticks() {
        let mut q = RequestQueue::new(&cfg(false));
        assert_eq!(q.target(), INITIAL_TARGET);
        // 1 MB arrives within the first second: neither rate nor target move until the tick.
        for _ in 0..64 {
            q.on_payload(BLOCK);
            q.on_block();
        }
        assert_eq!(q.rate(), 0);
        assert_eq!(q.target(), 2, "rate 0: clamped to min_queue");
        q.on_tick(TICK_NS);
        let mb = 64 * BLOCK;
        assert_eq!(q.rate(), mb / 5);
        assert_eq!(q.target(), 3 * (mb / 5) / BLOCK);
        // Another second at the same rate: avg*4/5 + sample/5.
        q.on_payload(mb);
        q.on_tick(TICK_NS);
        assert_eq!(q.rate(), (mb / 5) * 4 / 5 + mb / 5);
        // Blocks between ticks do not move the rate-based target.
        let before = q.target();
        for _ in 0..50 {
            q.on_block();
        }
        assert_eq!(q.target(), before);
    }

    #[test]
    fn slow_start_adds_one_per_block_and_ignores_the_rate() {
        let mut q = RequestQueue::new(&cfg(true));
        for k in 1..=10 {
            q.on_payload(BLOCK);
            q.on_block();
            assert_eq!(q.target(), INITIAL_TARGET + k);
        }
        // The tick updates the rate but not the target while in slow start.
        assert!(!q.on_tick(TICK_NS), "first second: nothing to compare with");
        assert!(q.in_slow_start());
        assert_eq!(q.target(), INITIAL_TARGET + 10);
        assert!(q.rate() > 0);
    }

    #[test]
    fn slow_start_ends_when_a_second_grows_by_at_most_the_threshold() {
        let mut q = RequestQueue::new(&cfg(true));
        q.on_payload(100_000);
        assert!(!q.on_tick(TICK_NS));
        // Growth of 10 001 bytes over last second: stay.
        q.on_payload(110_001);
        assert!(!q.on_tick(TICK_NS));
        assert!(q.in_slow_start());
        // Growth of exactly 10 000: leave; the target becomes rate-based at once.
        q.on_payload(120_001);
        assert!(q.on_tick(TICK_NS));
        assert!(!q.in_slow_start());
        assert_eq!(
            q.target(),
            (3 * q.rate() / BLOCK).clamp(2, 200),
            "rate-based after leaving"
        );
        // Never re-enters.
        q.on_payload(10_000_000);
        assert!(!q.on_tick(TICK_NS));
        assert!(!q.in_slow_start());
    }

    #[test]
    fn a_second_without_download_does_not_end_slow_start() {
        // libtorrent requires m_downloaded_last_second > 0.
        let mut q = RequestQueue::new(&cfg(true));
        assert!(!q.on_tick(TICK_NS));
        assert!(!q.on_tick(TICK_NS));
        assert!(q.in_slow_start());
    }

    #[test]
    fn target_is_clamped_to_min_and_max() {
        let mut c = cfg(true);
        c.max_queue = 6;
        c.min_queue = 3;
        let mut q = RequestQueue::new(&c);
        for _ in 0..10 {
            q.on_block();
        }
        assert_eq!(q.target(), 6);
        let mut q = RequestQueue::new(&cfg(false));
        q.on_payload(1_000_000_000);
        q.on_tick(TICK_NS);
        assert_eq!(q.target(), 200, "1 GB/s would want 36 621 requests");
    }
}
