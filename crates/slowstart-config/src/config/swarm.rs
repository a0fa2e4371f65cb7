//! A `[swarm]`: a BitTorrent swarm over access links, its words, defaults and bounds.

use super::*;

/// Which transport each leecher uploads with (Testa and Rossi §III).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Population {
    Tcp,
    Utp,
    /// Each leecher's transport drawn at random, half and half.
    Mixed,
}

/// What a leecher does once it has the whole file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Seeding {
    /// Stays until the run ends.
    NeverLeave,
    /// Stays an exponential time with mean `stay_factor` x its own download time, then leaves
    /// and a new leecher arrives at once (constant swarm size).
    RandomStay,
}

/// Which transport carries a connection's piece data each way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionTransport {
    /// Each direction its uploader's, as the paper describes its runs: peers upload "according
    /// to the protocol of their choice" (Testa and Rossi §IV). The ns-2 module itself has no
    /// uTP: one `FullTcp/Newreno` agent per side of one two-way connection carries that side's
    /// pieces and messages (SiangYun/BTcode `bittorrent_connection.cc`).
    Uploader,
    /// Both directions the transport of the peer that opened the connection, as a real one is
    /// one TCP connection or one uTP socket (libtorrent: the connecting side's
    /// `enable_outgoing_utp`/`_tcp`).
    Connector,
}

impl ConnectionTransport {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("uploader", Self::Uploader), ("connector", Self::Connector)];
}

impl<'de> Deserialize<'de> for ConnectionTransport {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// Which stream carries a peer's BitTorrent messages (all but piece messages) to the other end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Messages {
    /// A control stream of their own each way, beside the data streams (the module's agents
    /// as the model has run them): a request never waits behind piece data.
    Separate,
    /// The sender's own data stream to that end, behind the piece messages it already wrote,
    /// as BEP 3's one connection carries both each way (libtorrent appends a request to the
    /// send buffer that holds its outgoing blocks: `peer_connection::send_buffer`).
    WithData,
}

impl Messages {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("separate", Self::Separate), ("with_data", Self::WithData)];
}

impl<'de> Deserialize<'de> for Messages {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// When an uploader hands its transport the next requested block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SendBuffer {
    /// Once the transport has sent every byte of the previous piece message (ns-2 agents send
    /// what the application handed them, as the window allows).
    Transport,
    /// libtorrent 2.0's `peer_connection::fill_send_buffer`: while the bytes not yet sent are
    /// below a watermark of the connection's payload uploaded in the last second
    /// (`send_buffer_watermark_factor`), clamped to `send_buffer_low_watermark` and
    /// `send_buffer_watermark`; over TCP the kernel holds up to `send_not_sent_low_watermark`
    /// unsent bytes more (`TCP_NOTSENT_LOWAT`).
    Libtorrent,
}

impl SendBuffer {
    pub const WORDS: &'static [(&'static str, Self)] = &[
        ("transport", Self::Transport),
        ("libtorrent", Self::Libtorrent),
    ];
}

impl<'de> Deserialize<'de> for SendBuffer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// How a leecher chooses the next piece to ask a neighbour for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PiecePicker {
    /// The ns-2 module's `chunk_selection`: a piece already partly requested first, whatever its
    /// availability (the lowest-numbered); a random piece until the first completes; then
    /// rarest first.
    Module,
    /// libtorrent 2.0's `piece_picker::pick_pieces` with its default settings: random pieces,
    /// partial ones first, until 4 are held (`initial_picker_threshold`); then rarest first, a
    /// partial piece ahead of a fresh one only when equally rare (`piece_pos::priority`), and
    /// partial pieces first, rarest first, only while more than 1.5 per connection are
    /// partial. Seeds are not counted in a piece's availability. Whole pieces from fast
    /// connections: `whole_pieces_threshold`.
    Libtorrent,
}

impl PiecePicker {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("module", Self::Module), ("libtorrent", Self::Libtorrent)];
}

impl<'de> Deserialize<'de> for PiecePicker {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

impl Population {
    /// The words a config may write, the scenario's spelling first; serialized as the last.
    pub const WORDS: &'static [(&'static str, Self)] = &[
        ("tcp", Self::Tcp),
        ("utp", Self::Utp),
        ("50-50", Self::Mixed),
        ("mixed", Self::Mixed),
    ];
}

impl Seeding {
    pub const WORDS: &'static [(&'static str, Self)] = &[
        ("never-leave", Self::NeverLeave),
        ("random-stay", Self::RandomStay),
        ("never_leave", Self::NeverLeave),
        ("random_stay", Self::RandomStay),
    ];
}

impl<'de> Deserialize<'de> for Population {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

impl<'de> Deserialize<'de> for Seeding {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// A swarm: seeds at t = 0, leechers arriving with exponential inter-arrival times, each peer
/// behind its own access link, a core of infinite capacity and no delay. Defaults: the swarm of
/// Testa and Rossi, "The impact of uTP on BitTorrent completion time" (ns-2), see `Default`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwarmConfig {
    /// Seeds present at t = 0 (they never leave).
    pub seeds: u64,
    /// Leechers that arrive (replacements of departed seeds come on top).
    pub leechers: u64,
    pub arrival_mean_ns: u64,
    pub file_bytes: u64,
    pub piece_bytes: u64,
    pub block_bytes: u64,
    pub population: Population,
    /// Whose transport carries a connection's piece data: matters in a 50-50 population only.
    pub connection_transport: ConnectionTransport,
    pub seeding: Seeding,
    /// Mean stay after completion as a fraction of the peer's download time (paper: 0.5).
    pub stay_factor: f64,
    /// End the run at this many completions (`None`: at `duration` or when all are done).
    pub stop_after_completions: Option<u64>,
    /// Uplink queues sampled every this often for the queue series (paper: 10 Hz), and with
    /// libtorrent's request queue each connection's requests outstanding (a real swarm's
    /// peers report `download_queue_length` as often).
    pub queue_sample_ns: u64,
    /// Peers `0..traced_peers` (the seeds first, then leechers as they arrive): every upload
    /// of theirs is recorded in the flow trace, one series per half-connection, as a flow's
    /// sender is (0: none; a recorder for each of 100 000 peers' halves would outweigh them).
    pub traced_peers: u64,
    pub access: AccessConfig,
    pub bittorrent: SwarmBittorrentConfig,
    /// Data transport of TCP uploaders; also the control connections' settings.
    pub tcp: FlowConfig,
    /// Data transport of uTP uploaders.
    pub utp: FlowConfig,
}

/// Every peer's access link: `up` to the core, `down` from it, delay drawn per link.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AccessConfig {
    pub up_bps: u64,
    pub down_bps: u64,
    pub up_queue: QueueLimit,
    pub down_queue: QueueLimit,
    /// One-way propagation delay of each access link, uniform in [min, max], both directions.
    pub delay_min_ns: u64,
    pub delay_max_ns: u64,
}

/// The BitTorrent module of Eger et al. (ns-2), as the utp seed ran it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwarmBittorrentConfig {
    /// Peers the tracker returns per announce (`num_from_tracker`).
    pub tracker_peers: u64,
    /// Announce again while fewer connections than this (`min_peers`).
    pub min_peers: u64,
    /// Open no new connections at this many (`max_initiate`).
    pub max_initiate: u64,
    /// Accept no incoming connection at this many (`max_open_cons`).
    pub max_connections: u64,
    pub reannounce_ns: u64,
    /// Upload slots, the optimistic one included (`unchokes`).
    pub unchoke_slots: u64,
    pub rechoke_ns: u64,
    /// Rates for the choker are bytes over this window (ROLLING_AVERAGE x choking interval).
    pub rate_window_ns: u64,
    pub optimistic_ns: u64,
    /// Weight of a new connection in the optimistic draw (`opt_unchoke_prob = 3`).
    pub new_peer_weight: u64,
    /// Requests kept outstanding per connection (`pipelined_requests`); with
    /// `request_queue_time`, the depth a connection starts from.
    pub pipeline: u64,
    /// 0: `pipeline` requests, always (the ns-2 module). Otherwise libtorrent's request queue
    /// per connection (`app::bittorrent::RequestQueue`, `BittorrentConfig::libtorrent_2`):
    /// from 4 requests, one more per block received while the connection's payload per second
    /// still grows, then this long of its download rate (settings_pack `request_queue_time`),
    /// from 2 to 500 requests; `pipeline` is then unused.
    pub request_queue_time_ns: u64,
    /// Which piece a leecher asks for next (`PiecePicker`).
    pub piece_picker: PiecePicker,
    /// 0: off. Otherwise, with libtorrent's picker and request queue (which measures each
    /// connection's rate), a connection whose rate brings a whole piece within this long is
    /// asked for this long of its rate in whole pieces at once (at most 8 MiB), above the
    /// queue's target if need be, pieces others began only as backups (settings_pack
    /// `whole_pieces_threshold`, 20 s; `request_a_block`'s `prefer_contiguous_blocks`).
    pub whole_pieces_threshold_ns: u64,
    /// false: every block picked is requested at once, a whole-pieces range beyond the
    /// queue's target too. true: libtorrent's `peer_connection::send_block_requests` (RC_2_1):
    /// picked blocks wait at the downloader (`m_request_queue`) and are requested only while
    /// fewer than the queue's target are outstanding (`m_download_queue`); blocks are picked
    /// while both together are below it (`request_a_block`).
    pub hold_requests_beyond_target: bool,
    /// When an uploader hands its transport the next requested block (`SendBuffer`).
    pub send_buffer: SendBuffer,
    /// With `send_buffer = "libtorrent"`: the watermark's upper bound in bytes
    /// (settings_pack `send_buffer_watermark`, 500 KiB).
    pub send_buffer_watermark_bytes: u64,
    /// Its lower bound (`send_buffer_low_watermark`, 10 KiB).
    pub send_buffer_low_watermark_bytes: u64,
    /// The watermark in percent of the payload uploaded in the last second
    /// (`send_buffer_watermark_factor`, 50).
    pub send_buffer_watermark_factor: u64,
    /// Unsent bytes a TCP socket takes beyond the watermark (`send_not_sent_low_watermark`,
    /// 16 KiB, set as `TCP_NOTSENT_LOWAT`); uTP hands libtorrent back what it has not put in
    /// a packet, so none.
    pub send_not_sent_low_watermark_bytes: u64,
    /// Which stream carries the messages other than piece messages (`Messages`).
    pub messages: Messages,
    pub end_game: bool,
    pub anti_snubbing: bool,
    /// A peer that sent no block for this long is snubbed (ANTI_SNUBBING x choking interval).
    pub snub_ns: u64,
    pub super_seeding: bool,
}

impl Default for SwarmConfig {
    fn default() -> Self {
        // ns-2's one-way TCP as the paper used it: no SYN, window_ 20, windowInit_ 2, a
        // TCPSink that ACKs every segment, dupack-threshold loss detection, per-ACK growth.
        let ns2_agent = |cc: CcSpec| {
            let mut f = FlowConfig::new("uploader", "downloader");
            f.cc = cc;
            f.initcwnd = 2;
            f.initrwnd = 20;
            f.max_window_bytes = Some(20 * f.mss);
            f.handshake = false;
            f.delayed_ack = false;
            f.abc = false;
            f.recovery = Recovery::Rfc6675;
            f.loss_detection = LossDetection::Dupthresh;
            f
        };
        // The paper's LEDBAT module is an ns-2 TCP agent with a 25 ms target and no slow
        // start (ledbat's own default).
        let ledbat = CcSpec {
            name: "ledbat".into(),
            params: [(
                "target".to_string(),
                slowstart_cc::registry::ParamValue::Number(0.025),
            )]
            .into(),
            guest: None,
        };
        Self {
            seeds: 1,
            leechers: 100,
            arrival_mean_ns: 10_000_000_000,
            // Not given in the paper; its never-leave downloads take about 30 s at 8 Mbps.
            file_bytes: 25_000_000,
            piece_bytes: 256 * 1024,
            block_bytes: 16 * 1024,
            population: Population::Mixed,
            connection_transport: ConnectionTransport::Uploader,
            seeding: Seeding::RandomStay,
            stay_factor: 0.5,
            // 50 completions discarded, 50 kept.
            stop_after_completions: Some(100),
            queue_sample_ns: 100_000_000,
            traced_peers: 0,
            access: AccessConfig::default(),
            bittorrent: SwarmBittorrentConfig::default(),
            tcp: ns2_agent(default_cc()),
            utp: ns2_agent(ledbat),
        }
    }
}

impl Default for AccessConfig {
    /// 1 Mbps up and 8 Mbps down, 200-packet buffers, 1 to 25 ms one way (the paper's ADSL).
    fn default() -> Self {
        Self {
            up_bps: 1_000_000,
            down_bps: 8_000_000,
            up_queue: QueueLimit::Packets(200),
            down_queue: QueueLimit::Packets(200),
            delay_min_ns: 1_000_000,
            delay_max_ns: 25_000_000,
        }
    }
}

impl Default for SwarmBittorrentConfig {
    /// The ns-2 module's settings as the paper ran them.
    fn default() -> Self {
        Self {
            tracker_peers: 25,
            min_peers: 10,
            max_initiate: 20,
            max_connections: 40,
            reannounce_ns: 300_000_000_000,
            unchoke_slots: 4,
            rechoke_ns: 10_000_000_000,
            rate_window_ns: 20_000_000_000,
            optimistic_ns: 30_000_000_000,
            new_peer_weight: 3,
            pipeline: 5,
            request_queue_time_ns: 0,
            piece_picker: PiecePicker::Module,
            whole_pieces_threshold_ns: 0,
            hold_requests_beyond_target: false,
            send_buffer: SendBuffer::Transport,
            // libtorrent 2.0's settings_pack.cpp defaults (also 2.1's).
            send_buffer_watermark_bytes: 500 * 1024,
            send_buffer_low_watermark_bytes: 10 * 1024,
            send_buffer_watermark_factor: 50,
            send_not_sent_low_watermark_bytes: 16 * 1024,
            messages: Messages::Separate,
            end_game: false,
            anti_snubbing: false,
            snub_ns: 60_000_000_000,
            super_seeding: false,
        }
    }
}

/// Largest send-buffer watermark of a swarm's uploaders: 1 GiB (libtorrent's is an int).
pub const MAX_SEND_BUFFER_BYTES: u64 = 1 << 30;

/// Largest file a swarm shares: 1 PB.
pub const MAX_FILE_BYTES: u64 = 1_000_000_000_000_000;
/// Most peers one swarm may have at the start (seeds and scheduled leechers): far more than
/// memory allows today, which a run checks before it starts (issue #37); peer numbers stay well
/// within a swarm event's 29 bits.
pub const MAX_SWARM_PEERS: u64 = 10_000_000;
/// Most pieces a swarm's file may have, and most blocks per piece.
pub const MAX_PIECES: u64 = 1_000_000;
pub const MAX_BLOCKS_PER_PIECE: u64 = 4096;

impl SwarmConfig {
    /// `duration_ns` and `max_rows` (the run's and its trace's) bound the sampling interval.
    pub fn validate(&self, duration_ns: u64, max_rows: u64) -> Result<(), SimError> {
        let range =
            |field: &str, v: u64, lo: u64, hi: u64| in_range(&format!("swarm.{field}"), v, lo, hi);
        range("seeds", self.seeds, 1, MAX_SWARM_PEERS)?;
        range("leechers", self.leechers, 1, MAX_SWARM_PEERS - self.seeds)?;
        range("arrival_mean", self.arrival_mean_ns, 1, MAX_DELAY_NS)?;
        range("file", self.file_bytes, 1, MAX_FILE_BYTES)?;
        range("piece", self.piece_bytes, 1, MAX_FILE_BYTES)?;
        if self.piece_bytes > self.file_bytes {
            return Err(err(format!(
                "swarm.piece: must not exceed swarm.file ({} bytes), got {}",
                self.file_bytes, self.piece_bytes
            )));
        }
        range("block", self.block_bytes, 1, 1 << 24)?;
        if self.block_bytes > self.piece_bytes {
            return Err(err(format!(
                "swarm.block: must not exceed swarm.piece ({} bytes), got {}",
                self.piece_bytes, self.block_bytes
            )));
        }
        range(
            "file",
            self.file_bytes.div_ceil(self.piece_bytes),
            1,
            MAX_PIECES,
        )
        .map_err(|_| {
            err(format!(
                "swarm.piece: the file would have more than {MAX_PIECES} pieces"
            ))
        })?;
        if self.piece_bytes.div_ceil(self.block_bytes) > MAX_BLOCKS_PER_PIECE {
            return Err(err(format!(
                "swarm.block: a piece may hold at most {MAX_BLOCKS_PER_PIECE} blocks"
            )));
        }
        if !(self.stay_factor.is_finite() && self.stay_factor >= 0.0) {
            return Err(err(format!(
                "swarm.stay_factor: must be a finite number >= 0, got {}",
                self.stay_factor
            )));
        }
        if self.stop_after_completions == Some(0) {
            return Err(err(
                "swarm.stop_after: must be >= 1 completion or omitted".into()
            ));
        }
        range("queue_sample", self.queue_sample_ns, 1, MAX_DELAY_NS)?;
        // A sample interval no finer than the queue table can keep over the run.
        let samples = duration_ns / self.queue_sample_ns;
        if samples > max_rows {
            return Err(err(format!(
                "swarm.queue_sample: {} ns is {samples} samples in a {} s run, more than \
                 trace.max_rows ({max_rows}) keeps; at least {} ns (or raise trace.max_rows)",
                self.queue_sample_ns,
                duration_ns / 1_000_000_000,
                duration_ns.div_ceil(max_rows)
            )));
        }
        if self.traced_peers > self.seeds.saturating_add(self.leechers) {
            return Err(err(format!(
                "swarm.traced_peers: at most the swarm's {} peers (seeds and leechers), got {}",
                self.seeds.saturating_add(self.leechers),
                self.traced_peers
            )));
        }
        let a = &self.access;
        range("up", a.up_bps, 1, MAX_RATE_BPS)?;
        range("down", a.down_bps, 1, MAX_RATE_BPS)?;
        for (field, q) in [("buffer", a.up_queue), ("down_buffer", a.down_queue)] {
            match q {
                QueueLimit::Packets(n) => range(field, n, 1, MAX_QUEUE_PACKETS)?,
                QueueLimit::Bytes(b) => {
                    let largest = [&self.tcp, &self.utp]
                        .iter()
                        .map(|t| t.mss.saturating_add(t.header_bytes))
                        .max()
                        .unwrap_or(1);
                    range(field, b, largest, MAX_QUEUE_BYTES)?
                }
            }
        }
        if a.delay_min_ns > a.delay_max_ns {
            return Err(err(format!(
                "swarm.delay: the minimum must not exceed the maximum, got {} > {} ns",
                a.delay_min_ns, a.delay_max_ns
            )));
        }
        range("delay", a.delay_max_ns, 0, MAX_DELAY_NS)?;
        let b = &self.bittorrent;
        range(
            "bittorrent.tracker_peers",
            b.tracker_peers,
            1,
            MAX_SWARM_PEERS,
        )?;
        range("bittorrent.min_peers", b.min_peers, 0, MAX_SWARM_PEERS)?;
        range(
            "bittorrent.max_initiate",
            b.max_initiate,
            1,
            MAX_SWARM_PEERS,
        )?;
        range(
            "bittorrent.max_connections",
            b.max_connections,
            1,
            MAX_SWARM_PEERS,
        )?;
        range("bittorrent.reannounce", b.reannounce_ns, 1, MAX_DELAY_NS)?;
        range("bittorrent.unchoke_slots", b.unchoke_slots, 1, 10_000)?;
        range("bittorrent.rechoke", b.rechoke_ns, 1, MAX_DELAY_NS)?;
        range("bittorrent.rate_window", b.rate_window_ns, 1, MAX_DELAY_NS)?;
        range("bittorrent.optimistic", b.optimistic_ns, 1, MAX_DELAY_NS)?;
        range("bittorrent.new_peer_weight", b.new_peer_weight, 1, 1000)?;
        range("bittorrent.pipeline", b.pipeline, 1, 10_000)?;
        range(
            "bittorrent.request_queue_time",
            b.request_queue_time_ns,
            0,
            MAX_DELAY_NS,
        )?;
        range(
            "bittorrent.whole_pieces_threshold",
            b.whole_pieces_threshold_ns,
            0,
            MAX_DELAY_NS,
        )?;
        if b.whole_pieces_threshold_ns > 0
            && (b.piece_picker != PiecePicker::Libtorrent || b.request_queue_time_ns == 0)
        {
            return Err(err(
                "swarm.bittorrent.whole_pieces_threshold: needs piece_picker = \"libtorrent\" \
                 and request_queue_time above 0 (which measures each connection's rate)"
                    .into(),
            ));
        }
        if b.hold_requests_beyond_target && b.request_queue_time_ns == 0 {
            return Err(err(
                "swarm.bittorrent.hold_requests_beyond_target: needs request_queue_time above 0 \
                 (libtorrent's queue, whose target it holds to)"
                    .into(),
            ));
        }
        range(
            "bittorrent.send_buffer_low_watermark",
            b.send_buffer_low_watermark_bytes,
            1,
            MAX_SEND_BUFFER_BYTES,
        )?;
        range(
            "bittorrent.send_buffer_watermark",
            b.send_buffer_watermark_bytes,
            b.send_buffer_low_watermark_bytes,
            MAX_SEND_BUFFER_BYTES,
        )?;
        range(
            "bittorrent.send_buffer_watermark_factor",
            b.send_buffer_watermark_factor,
            1,
            10_000,
        )?;
        range(
            "bittorrent.send_not_sent_low_watermark",
            b.send_not_sent_low_watermark_bytes,
            0,
            MAX_SEND_BUFFER_BYTES,
        )?;
        range("bittorrent.snub", b.snub_ns, 1, MAX_DELAY_NS)?;
        // Counts of connections that max_connections caps: above it they never bind.
        for (field, v) in [
            ("min_peers", b.min_peers),
            ("max_initiate", b.max_initiate),
            ("unchoke_slots", b.unchoke_slots),
        ] {
            if v > b.max_connections {
                return Err(err(format!(
                    "swarm.bittorrent.{field}: must not exceed swarm.bittorrent.max_connections \
                     ({}), got {v}",
                    b.max_connections
                )));
            }
        }
        if b.super_seeding {
            return Err(err(
                "swarm.bittorrent.super_seeding: not modelled; only false is accepted".into(),
            ));
        }
        for (name, t) in [("tcp", &self.tcp), ("utp", &self.utp)] {
            let at = format!("swarm.{name}");
            t.validate_transport(&at)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_swarm_defaults_validate_and_an_empty_table_is_them() {
        let d = SwarmConfig::default();
        d.validate(4_000_000_000_000, 2_000_000).unwrap();
        let empty: SwarmConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(
            serde_json::to_string(&empty).unwrap(),
            serde_json::to_string(&d).unwrap()
        );
        // ns-2's window_ 20, in the default MSS.
        assert_eq!(d.tcp.max_window_bytes, Some(20 * 1460));
        assert_eq!(d.utp.cc.name, "ledbat");
    }
}
