//! Swarm runs small enough for a unit test: determinism, byte and block accounting, choking and
//! piece-selection rules checked on the run's log.

use slowstart_cc::CcSpec;

use crate::swarm::SwarmSim;
use slowstart_apps::swarm::pieces::INITIAL_PICKER_THRESHOLD;
use slowstart_apps::swarm::{send_buffer_watermark, LogEntry};
use slowstart_config::testing::SEC;
use slowstart_config::{
    Messages, PiecePicker, Population, QueueLimit, Seeding, SendBuffer, SimConfig,
    SwarmBittorrentConfig, SwarmConfig, TraceConfig,
};

/// `leechers` peers, a `file_kb` kB file in 64 KiB pieces; the rest as the paper's swarm.
pub fn small_swarm(leechers: u64, file_kb: u64, population: Population) -> SimConfig {
    SimConfig {
        name: "swarm-test".into(),
        seed: 1,
        duration_ns: 2000 * SEC,
        nodes: vec![],
        links: vec![],
        flows: vec![],
        cross: vec![],
        trace: TraceConfig::default(),
        run_to_end: false,
        swarm: Some(SwarmConfig {
            leechers,
            arrival_mean_ns: 2 * SEC,
            file_bytes: file_kb * 1000,
            piece_bytes: 64 * 1024,
            population,
            seeding: Seeding::NeverLeave,
            stop_after_completions: Some(leechers),
            // One seed, the paper's access links, BitTorrent module and ns-2 agents.
            ..SwarmConfig::default()
        }),
    }
}

fn swarm_mut(cfg: &mut SimConfig) -> &mut SwarmConfig {
    cfg.swarm.as_mut().unwrap()
}

#[test]
fn every_leecher_gets_the_whole_file_once() {
    let cfg = small_swarm(8, 1000, Population::Mixed);
    let out = crate::run(&cfg).unwrap();
    let s = &out.summary;
    let swarm = s.swarm().unwrap();
    assert_eq!(swarm.completions, 8);
    assert!(swarm.stopped_at_completions);
    let file = 1_000_000;
    let mut ranks = vec![];
    for p in s.peers().iter().filter(|p| !p.initial_seed) {
        // Without end game no block is asked for twice, chokes included.
        assert_eq!(p.bytes_down, file, "peer {} got every block once", p.id);
        assert_eq!(p.duplicate_bytes, 0);
        let c = p.completion_s.unwrap();
        assert!((p.done_s.unwrap() - p.arrival_s - c).abs() < 1e-9);
        // 8 Mbps down: the file cannot arrive faster than 1 s.
        assert!(c > 1.0, "{c}");
        ranks.push(p.completion_rank.unwrap());
    }
    ranks.sort();
    assert_eq!(ranks, (1..=8).collect::<Vec<_>>());
    // What was downloaded was uploaded: bytes conserved across the swarm.
    let up: u64 = s.peers().iter().map(|p| p.bytes_up).sum();
    let down: u64 = s.peers().iter().map(|p| p.bytes_down).sum();
    assert_eq!(up, down);
    assert!(s.peers().iter().any(|p| p.transport == "utp"));
    assert!(s.peers().iter().any(|p| p.transport == "tcp"));
}

#[test]
fn same_seed_same_bytes_other_seed_other_run() {
    let cfg = small_swarm(6, 600, Population::Mixed);
    let a = serde_json::to_string(&crate::run(&cfg).unwrap().summary).unwrap();
    let b = serde_json::to_string(&crate::run(&cfg).unwrap().summary).unwrap();
    assert_eq!(a, b);
    let mut other = cfg.clone();
    other.seed = 2;
    let c = serde_json::to_string(&crate::run(&other).unwrap().summary).unwrap();
    assert_ne!(a, c);
}

/// A swarm gives the same bytes over each of the engine's queues: the timing wheel, the
/// calendar and the flows' heaps.
#[test]
fn every_queue_gives_the_same_swarm() {
    use crate::engine::{CalendarQueue, Event, EventQueue};
    use crate::swarm::engine::SwarmEvent;
    use crate::wheel::WheelQueue;
    let cfg = small_swarm(6, 600, Population::Mixed);
    let wheel = SwarmSim::<WheelQueue<Event<SwarmEvent>>>::with_queue(&cfg)
        .unwrap()
        .run();
    let calendar = SwarmSim::<CalendarQueue<Event<SwarmEvent>>>::with_queue(&cfg)
        .unwrap()
        .run();
    let heaps = SwarmSim::<EventQueue<Event<SwarmEvent>>>::with_queue(&cfg)
        .unwrap()
        .run();
    assert_eq!(wheel.summary.swarm().unwrap().completions, 6);
    for other in [&calendar, &heaps] {
        assert_eq!(
            serde_json::to_string(&wheel.summary).unwrap(),
            serde_json::to_string(&other.summary).unwrap()
        );
        assert_eq!(wheel.queues.queue_bytes, other.queues.queue_bytes);
    }
}

#[test]
fn data_bytes_are_conserved_per_connection() {
    let mut cfg = small_swarm(6, 800, Population::Tcp);
    // A small uplink buffer, so that drops happen; stop before the end so bytes are in flight.
    swarm_mut(&mut cfg).access.up_queue = QueueLimit::Packets(5);
    swarm_mut(&mut cfg).stop_after_completions = None;
    cfg.duration_ns = 12 * SEC;
    let mut sim = SwarmSim::new(&cfg).unwrap();
    sim.advance();
    let mut checked = 0;
    let mut dropped = 0;
    for h in 0..sim.halves() {
        if let Some((sent, received, drop, held)) = sim.byte_ledger(h) {
            assert_eq!(sent, received + drop + held, "half {h}");
            checked += 1;
            dropped += drop;
        }
    }
    assert!(checked > 4, "{checked}");
    assert!(dropped > 0, "the 5-packet buffers drop");
}

#[test]
fn a_half_holds_data_ends_only_once_its_uploader_writes_to_it() {
    // 1 seed and 6 TCP leechers, stopped at 12 s. With the messages on control streams of
    // their own, a half whose uploader wrote no piece holds its control stream alone (the
    // seed's downloads never carry one) and its ledger reads zeros; with the messages in the
    // data streams, a half has its data ends once its uploader wrote its first message.
    let run = |messages: Messages| {
        let mut cfg = small_swarm(6, 800, Population::Tcp);
        swarm_mut(&mut cfg).stop_after_completions = None;
        swarm_mut(&mut cfg).bittorrent.messages = messages;
        cfg.duration_ns = 12 * SEC;
        let mut sim = SwarmSim::new(&cfg).unwrap();
        sim.advance();
        let (mut with, mut without) = (0, 0);
        for h in 0..sim.halves() {
            match sim.has_data_ends(h) {
                Some(true) => with += 1,
                Some(false) => {
                    without += 1;
                    assert_eq!(sim.byte_ledger(h), Some((0, 0, 0, 0)), "half {h}");
                    assert_eq!(sim.send_buffer(h).map(|b| b.0), Some(0), "half {h}");
                }
                None => {}
            }
        }
        (with, without)
    };
    let (with, without) = run(Messages::Separate);
    assert!(with > 0 && without >= 6, "{with} with, {without} without");
    let (with_data, without_data) = run(Messages::WithData);
    eprintln!("separate: {with} with, {without} without; with_data: {with_data}, {without_data}");
    assert!(
        without_data < without,
        "{with_data} with, {without_data} without"
    );
}

#[test]
fn choking_keeps_to_the_slots_and_rechokes_on_time() {
    let mut cfg = small_swarm(12, 2000, Population::Mixed);
    swarm_mut(&mut cfg).seeding = Seeding::RandomStay;
    swarm_mut(&mut cfg).stop_after_completions = Some(16);
    let (out, log) = SwarmSim::new(&cfg).unwrap().with_log().run_logged();
    assert!(out.summary.swarm().unwrap().completions >= 16);
    // Peers come and go and chokes move, yet no block is sent twice.
    assert!(out.summary.peers().iter().all(|p| p.duplicate_bytes == 0));
    let mut unchoked: std::collections::HashMap<u32, std::collections::BTreeSet<u32>> =
        Default::default();
    let mut decisions = 0;
    for e in &log {
        match *e {
            LogEntry::Choke {
                peer,
                conn,
                unchoked: u,
                ..
            } => {
                let set = unchoked.entry(peer).or_default();
                if u {
                    assert!(set.insert(conn), "unchoked twice");
                } else {
                    assert!(set.remove(&conn), "choked a peer that was not unchoked");
                }
                assert!(set.len() <= 4, "peer {peer} has {} unchoked", set.len());
                decisions += 1;
            }
            LogEntry::Close { conn, .. } => {
                for set in unchoked.values_mut() {
                    set.remove(&conn);
                }
            }
            LogEntry::Request { .. } => {}
        }
    }
    assert!(decisions > 20, "{decisions}");
}

#[test]
fn a_choked_upload_gives_back_its_scoreboard_at_the_first_rechoke_it_has_drained_by() {
    // The seed (peer 0, rechoking every 10 s from 0) among 12 leechers that never leave,
    // each run stopped just after one of its rechokes: an upload that still holds a
    // scoreboard there is unchoked, or choked with data not yet acknowledged. With the
    // messages in the data streams too, where a choked upload still carries its uploader's.
    let mut cfg = small_swarm(12, 4000, Population::Mixed);
    swarm_mut(&mut cfg).stop_after_completions = None;
    let (mut kept, mut released) = (0, 0);
    let runs = (20..=140).step_by(20);
    for (messages, rechoke_s) in [Messages::Separate, Messages::WithData]
        .into_iter()
        .flat_map(|m| runs.clone().map(move |t| (m, t)))
    {
        swarm_mut(&mut cfg).bittorrent.messages = messages;
        cfg.duration_ns = rechoke_s * SEC;
        let mut sim = SwarmSim::new(&cfg).unwrap().with_log();
        sim.advance();
        let log = sim.take_log();
        let mut unchoked = std::collections::BTreeSet::new();
        for e in &log {
            if let LogEntry::Choke {
                peer: 0,
                conn,
                unchoked: u,
                ..
            } = *e
            {
                if u {
                    unchoked.insert(conn);
                } else {
                    unchoked.remove(&conn);
                }
            }
        }
        for h in (0..sim.halves()).filter(|&h| sim.ends(h).0 == 0) {
            let Some((bytes, drained)) = sim.sender_storage(h) else {
                continue;
            };
            let choked = !unchoked.contains(&(h / 2));
            if choked && drained && sim.has_data_ends(h) == Some(true) {
                assert_eq!(bytes, 0, "{messages:?}: half {h} at {rechoke_s} s");
                released += 1;
            } else if bytes > 0 {
                kept += 1;
            }
        }
    }
    assert!(
        released > 5 && kept > 5,
        "{released} given back, {kept} kept"
    );
}

#[test]
fn pieces_are_chosen_random_first_then_rarest() {
    let cfg = small_swarm(10, 2000, Population::Tcp);
    let (_, log) = SwarmSim::new(&cfg).unwrap().with_log().run_logged();
    let mut fresh_after_first = 0;
    for e in &log {
        if let LogEntry::Request {
            have,
            started,
            availability,
            rarest,
            ..
        } = *e
        {
            if !started && have > 0 {
                // A piece begun afresh once one is complete is among the rarest the remote has.
                assert_eq!(Some(availability), rarest);
                fresh_after_first += 1;
            }
        }
    }
    assert!(fresh_after_first > 20, "{fresh_after_first}");
}

#[test]
fn random_stay_replaces_those_who_leave() {
    let mut cfg = small_swarm(6, 600, Population::Utp);
    swarm_mut(&mut cfg).seeding = Seeding::RandomStay;
    swarm_mut(&mut cfg).stop_after_completions = Some(12);
    let out = crate::run(&cfg).unwrap();
    let s = &out.summary;
    let left = s.peers().iter().filter(|p| p.left_s.is_some()).count();
    let replacements = s.peers().iter().filter(|p| p.replacement).count();
    assert!(left > 0);
    assert_eq!(left, replacements, "each departure brings a new leecher");
    for p in s.peers().iter().filter(|p| p.left_s.is_some()) {
        assert!(p.left_s.unwrap() >= p.done_s.unwrap());
    }
    assert!(s.peers().iter().all(|p| p.transport == "utp"));
    // The queue series samples uplinks only (even link numbers), at 10 Hz.
    assert!(!out.queues.is_empty());
    assert!(out.queues.link.iter().all(|l| l % 2 == 0));
}

#[test]
fn bad_swarm_settings_name_the_field() {
    type Change = Box<dyn Fn(&mut SwarmConfig)>;
    let cases: Vec<(Change, &str)> = vec![
        (Box::new(|s| s.leechers = 0), "swarm.leechers"),
        (Box::new(|s| s.seeds = 0), "swarm.seeds"),
        (
            Box::new(|s| s.piece_bytes = s.file_bytes + 1),
            "swarm.piece",
        ),
        (
            Box::new(|s| s.block_bytes = s.piece_bytes + 1),
            "swarm.block",
        ),
        (Box::new(|s| s.access.up_bps = 0), "swarm.up"),
        (
            Box::new(|s| s.access.up_queue = QueueLimit::Packets(0)),
            "swarm.buffer",
        ),
        (
            Box::new(|s| s.access.delay_min_ns = s.access.delay_max_ns + 1),
            "swarm.delay",
        ),
        (Box::new(|s| s.stay_factor = f64::NAN), "swarm.stay_factor"),
        (Box::new(|s| s.traced_peers = 4), "swarm.traced_peers"),
        (
            Box::new(|s| s.bittorrent.pipeline = 0),
            "swarm.bittorrent.pipeline",
        ),
        (
            Box::new(|s| s.bittorrent.super_seeding = true),
            "swarm.bittorrent.super_seeding",
        ),
        (Box::new(|s| s.tcp.mss = 0), "swarm.tcp.mss"),
        (
            Box::new(|s| s.utp.cc = CcSpec::named("nope")),
            "swarm.utp.cc",
        ),
    ];
    for (change, field) in cases {
        let mut cfg = small_swarm(2, 100, Population::Tcp);
        change(swarm_mut(&mut cfg));
        let e = crate::run(&cfg).err().expect(field);
        assert!(e.0.starts_with(field), "{field}: {}", e.0);
    }
}

#[test]
fn libtorrents_request_queue_grows_with_the_rate_where_a_fixed_pipeline_stalls() {
    // One seed and one leecher 100 ms from the hub each (400 ms round trips), the seed's
    // 1 Mbps uplink the bottleneck. One request outstanding brings one 16 KiB block per round
    // trip, 0.33 Mbps at best; libtorrent's queue (request_queue_time, peer_connection.cpp)
    // grows by a request per block in slow start, then holds 3 s of the rate, and fills the
    // uplink.
    let run = |queue_time_ns: u64| {
        let mut cfg = small_swarm(1, 1000, Population::Tcp);
        let w = swarm_mut(&mut cfg);
        w.access.delay_min_ns = 100_000_000;
        w.access.delay_max_ns = 100_000_000;
        w.bittorrent.pipeline = 1;
        w.bittorrent.request_queue_time_ns = queue_time_ns;
        let out = crate::run(&cfg).unwrap();
        let leecher = out
            .summary
            .peers()
            .iter()
            .find(|p| !p.initial_seed)
            .unwrap();
        assert_eq!(leecher.bytes_down, 1_000_000);
        (leecher.completion_s.unwrap(), leecher.request_queue_mean)
    };
    let (fixed, no_mean) = run(0);
    let (rate_based, mean) = run(3 * SEC);
    // Only the rate-sized queue reports its depth; it held many blocks: a 1 Mbps uplink's 3 s
    // is 22 blocks of 16 KiB.
    assert_eq!(no_mean, None);
    let mean = mean.unwrap();
    assert!(mean > 5.0 && mean <= 500.0, "{mean}");
    // 1 MB at 16 KiB per 0.4 s is 24 s; at 1 Mbps, 8 s plus headers and the start.
    assert!(fixed > 24.0, "{fixed}");
    assert!(
        rate_based > 8.0 && rate_based < 0.5 * fixed,
        "{rate_based} vs {fixed}"
    );
}

#[test]
fn a_connection_carries_its_openers_transport_both_ways_when_asked() {
    use slowstart_config::ConnectionTransport;
    let run = |population: Population, choice: ConnectionTransport| {
        let mut cfg = small_swarm(6, 500, population);
        swarm_mut(&mut cfg).connection_transport = choice;
        let out = crate::run(&cfg).unwrap();
        serde_json::to_string(&out.summary).unwrap()
    };
    // One transport everywhere: whose it is cannot matter.
    assert_eq!(
        run(Population::Utp, ConnectionTransport::Uploader),
        run(Population::Utp, ConnectionTransport::Connector)
    );
    // A 50-50 swarm: some connections join a TCP and a uTP peer, and their data moves.
    let mixed = |choice| {
        let mut cfg = small_swarm(6, 500, Population::Mixed);
        swarm_mut(&mut cfg).connection_transport = choice;
        let out = crate::run(&cfg).unwrap();
        let swarm = out.summary.swarm().unwrap();
        (swarm.tcp.data_packets_sent, swarm.utp.data_packets_sent)
    };
    let (by_uploader, by_connector) = (
        mixed(ConnectionTransport::Uploader),
        mixed(ConnectionTransport::Connector),
    );
    assert_ne!(by_uploader, by_connector);
    assert!(by_connector.0 > 0 && by_connector.1 > 0, "{by_connector:?}");
}

#[test]
fn libtorrents_picker_spends_the_seed_on_new_pieces_where_the_modules_repeats_them() {
    // The paper's access links (1 Mbps up, 8 down), 1 seed and 7 leechers arriving a second
    // apart, never leaving, a 25 MB file in 256 KiB pieces: the leechers' uplinks together are
    // 7 times the seed's, so the swarm waits for the pieces only the seed has.
    let run = |picker: PiecePicker| {
        let mut cfg = small_swarm(7, 25_000, Population::Utp);
        let w = swarm_mut(&mut cfg);
        w.arrival_mean_ns = SEC;
        w.piece_bytes = 256 * 1024;
        w.bittorrent.piece_picker = picker;
        let (out, log) = SwarmSim::new(&cfg).unwrap().with_log().run_logged();
        let peers = out.summary.peers();
        assert!(peers
            .iter()
            .all(|p| p.initial_seed || p.completion_s.is_some()));
        let seed_copies = peers[0].bytes_up as f64 / 25e6;
        // Requests for a partial piece more common than the rarest the remote could begin.
        let common_partials = log
            .iter()
            .filter(|e| {
                matches!(**e, LogEntry::Request { have, started: true, availability,
                    rarest: Some(rarest), .. } if have >= INITIAL_PICKER_THRESHOLD
                    && availability > rarest)
            })
            .count();
        let mut done: Vec<f64> = peers.iter().filter_map(|p| p.completion_s).collect();
        done.sort_by(f64::total_cmp);
        (seed_copies, common_partials, done[done.len() / 2])
    };
    let (module_copies, module_partials, module_median) = run(PiecePicker::Module);
    let (lt_copies, lt_partials, lt_median) = run(PiecePicker::Libtorrent);
    // The module finishes a started piece first, from whoever unchoked it, the seed
    // included: the seed sends pieces the leechers already trade among themselves.
    assert!(module_partials > 100, "{module_partials}");
    // libtorrent's priority puts availability first: a more common partial piece only while
    // more than 1.5 pieces per connection are partial (`partial_ratio`; 3 requests of seed 1).
    assert!(
        lt_partials * 100 < module_partials,
        "{lt_partials} vs {module_partials}"
    );
    // What the seed sends is what the swarm can trade: one copy and a little more, where
    // the module's seed sends nearly two, and every leecher waits for them (seed 1: 1.80
    // copies and a median of 371 s against 1.22 and 253 s).
    assert!(module_copies > 1.6, "{module_copies}");
    assert!(lt_copies < 1.35, "{lt_copies}");
    assert!(
        lt_median < 0.8 * module_median,
        "{lt_median} vs {module_median}"
    );
}

#[test]
fn libtorrent_asks_a_fast_connection_for_whole_pieces() {
    // One seed and one leecher, the seed's 1 Mbps uplink the bottleneck: 125 kB/s brings a
    // 64 KiB piece in well under libtorrent's whole_pieces_threshold (20 s), so once the
    // connection's rate is measured every request names a whole piece, above the queue's
    // target (3 s of the rate: 23 blocks) if need be.
    let run = |picker: PiecePicker| {
        let mut cfg = small_swarm(1, 4000, Population::Tcp);
        let w = swarm_mut(&mut cfg);
        w.bittorrent.piece_picker = picker;
        w.bittorrent.pipeline = 4;
        w.bittorrent.request_queue_time_ns = 3 * SEC;
        if picker == PiecePicker::Libtorrent {
            w.bittorrent.whole_pieces_threshold_ns = 20 * SEC;
        }
        let (out, log) = SwarmSim::new(&cfg).unwrap().with_log().run_logged();
        let leecher = out
            .summary
            .peers()
            .iter()
            .find(|p| !p.initial_seed)
            .unwrap();
        assert_eq!(leecher.bytes_down, 4_000_000);
        assert_eq!(leecher.duplicate_bytes, 0);
        let picks = log
            .iter()
            .filter(|e| matches!(e, LogEntry::Request { .. }))
            .count();
        (picks, leecher.request_queue_mean.unwrap())
    };
    let (pieces, blocks) = (
        4_000_000usize.div_ceil(64 * 1024),
        4_000_000usize.div_ceil(16 * 1024),
    );
    let (block_picks, block_queue) = run(PiecePicker::Module);
    let (whole_picks, whole_queue) = run(PiecePicker::Libtorrent);
    // The module asks block by block; libtorrent a piece at a time once the first second's
    // rate is known, block by block before.
    assert_eq!(block_picks, blocks);
    assert!(
        whole_picks < pieces + 20,
        "{whole_picks} picks for {pieces} pieces"
    );
    assert!(block_queue <= 24.0, "{block_queue}");
    assert!(
        whole_queue > 2.0 * block_queue,
        "{whole_queue} vs {block_queue}"
    );
}

#[test]
fn libtorrents_send_buffer_watermark_is_half_the_last_seconds_upload_within_its_bounds() {
    // libtorrent's defaults (settings_pack.cpp): factor 50%, at least 10 KiB, at most 500 KiB.
    let b = SwarmBittorrentConfig::default();
    assert_eq!(send_buffer_watermark(&b, 0), 10 * 1024);
    // The paper's 1 Mbps uplink shared by 7 uploads: 17 857 B/s, half of it under 10 KiB,
    // so the low watermark: less than one 16 KiB block.
    assert_eq!(send_buffer_watermark(&b, 1_000_000 / 8 / 7), 10 * 1024);
    // 4 Mbps over 7 (real-swarm.toml): 71 428 B/s, 35 714 bytes, two blocks and a bit.
    assert_eq!(send_buffer_watermark(&b, 4_000_000 / 8 / 7), 35_714);
    // 10 Mbps to one connection: 625 000 bytes, held at 500 KiB.
    assert_eq!(send_buffer_watermark(&b, 10_000_000 / 8), 500 * 1024);
}

#[test]
fn an_uploader_buffers_below_libtorrents_watermark() {
    // One seed and three TCP leechers on the paper's links; stopped at several times, every
    // upload's unsent bytes are below its limit and at most one piece message more (a block
    // is written whole once the unsent bytes are below it).
    let piece_message = 16 * 1024 + 13;
    let most_unsent = |send_buffer: SendBuffer| {
        let mut most = 0;
        for stop_s in [3, 7, 11, 19] {
            let mut cfg = small_swarm(3, 2000, Population::Tcp);
            swarm_mut(&mut cfg).bittorrent.send_buffer = send_buffer;
            swarm_mut(&mut cfg).stop_after_completions = None;
            cfg.duration_ns = stop_s * SEC;
            let mut sim = SwarmSim::new(&cfg).unwrap();
            sim.advance();
            for h in 0..sim.halves() {
                if let Some((unsent, limit)) = sim.send_buffer(h) {
                    assert!(
                        unsent < limit + piece_message,
                        "half {h}: {unsent} of {limit}"
                    );
                    most = most.max(unsent);
                }
            }
        }
        most
    };
    // The module's uploader holds one piece message at most; libtorrent's, at 1 Mbps shared,
    // its 10 KiB watermark and the kernel's 16 KiB of unsent bytes (TCP_NOTSENT_LOWAT): up
    // to three blocks.
    assert!(most_unsent(SendBuffer::Transport) <= piece_message);
    assert!(most_unsent(SendBuffer::Libtorrent) > piece_message);
}

#[test]
fn messages_in_the_data_stream_wait_behind_piece_data_and_keep_every_byte() {
    // 1 seed and 5 TCP leechers on the paper's links, trading both ways. With each peer's
    // requests behind the piece data it already wrote to that neighbour, an uploader has fewer
    // requests at hand and its uplink drops less; every block still arrives once and every
    // byte written to a data stream is received, dropped or on its way (seed 1: 112 drops
    // with a control stream of their own, 2 with the data).
    let run = |messages: Messages| {
        let mut cfg = small_swarm(5, 3000, Population::Tcp);
        let w = swarm_mut(&mut cfg);
        w.arrival_mean_ns = SEC;
        // Without ns-2's 20-segment cap, so that the uplinks overflow.
        w.tcp.max_window_bytes = None;
        w.tcp.initcwnd = 10;
        w.bittorrent.messages = messages;
        w.bittorrent.send_buffer = SendBuffer::Libtorrent;
        let mut sim = SwarmSim::new(&cfg).unwrap();
        let end = sim.advance();
        for h in 0..sim.halves() {
            if let Some((sent, received, drop, held)) = sim.byte_ledger(h) {
                assert_eq!(sent, received + drop + held, "half {h}");
            }
        }
        let out = sim.finish(end);
        let swarm = out.summary.swarm().unwrap();
        assert_eq!(swarm.completions, 5);
        for p in out.summary.peers().iter().filter(|p| !p.initial_seed) {
            assert_eq!(p.bytes_down, 3_000_000, "peer {}", p.id);
            assert_eq!(p.duplicate_bytes, 0);
        }
        swarm.tcp.drops
    };
    let (separate, with_data) = (run(Messages::Separate), run(Messages::WithData));
    eprintln!("drops: separate {separate}, with_data {with_data}");
    assert!(with_data < separate, "{with_data} vs {separate}");
}

#[test]
fn held_requests_keep_the_wire_to_the_queues_target() {
    // One seed and three TCP leechers on the paper's links, libtorrent's queue and whole
    // pieces (64 KiB pieces: 4 blocks). Whole pieces overshoot the queue's target (3 s of a
    // connection's rate); without holding, every picked block is requested at once and waits
    // at the uploader; with it, as libtorrent's send_block_requests, the blocks beyond the
    // target wait at the downloader, requested as earlier ones arrive.
    let run = |hold: bool, stop_s: u64| {
        let mut cfg = small_swarm(3, 2000, Population::Tcp);
        let w = swarm_mut(&mut cfg);
        w.bittorrent.piece_picker = PiecePicker::Libtorrent;
        w.bittorrent.request_queue_time_ns = 3 * SEC;
        w.bittorrent.whole_pieces_threshold_ns = 20 * SEC;
        w.bittorrent.hold_requests_beyond_target = hold;
        if stop_s > 0 {
            w.stop_after_completions = None;
            cfg.duration_ns = stop_s * SEC;
        }
        SwarmSim::new(&cfg).unwrap()
    };
    let samples = |hold: bool| {
        let mut rows = Vec::new();
        for stop_s in [4, 8, 12, 16, 20, 24] {
            let mut sim = run(hold, stop_s);
            sim.advance();
            for c in 0..sim.halves() / 2 {
                rows.extend(sim.requests(c).into_iter().flatten());
            }
        }
        rows
    };
    let over = |rows: &[(usize, usize, u64)]| {
        rows.iter()
            .map(|&(sent, _, target)| sent as i64 - target as i64)
            .max()
            .unwrap()
    };
    let all_sent = samples(false);
    let held = samples(true);
    assert!(all_sent.iter().all(|&(_, h, _)| h == 0));
    assert!(held.iter().any(|&(_, h, _)| h > 4), "{held:?}");
    // Without holding, requests exceed the target by several pieces (seed 1: 22 blocks);
    // with it only where the target fell after they were sent (libtorrent cancels none).
    assert!(over(&all_sent) > 3 * 4, "{all_sent:?}");
    assert!(over(&held) < over(&all_sent) / 2, "{held:?}");
    // Holding loses no block and asks for none twice.
    let out = run(true, 0).run();
    for p in out.summary.peers().iter().filter(|p| !p.initial_seed) {
        assert_eq!(p.bytes_down, 2_000_000);
        assert_eq!(p.duplicate_bytes, 0);
    }
}

#[test]
fn a_peers_memory_estimate_saturates_at_the_keys_bounds() {
    use crate::swarm::engine::peak_bytes_per_peer;
    use slowstart_config::{MAX_DELAY_NS, MAX_QUEUE_PACKETS, MAX_SWARM_PEERS};
    let paper = peak_bytes_per_peer(&SwarmConfig::default());
    // At every bound at once the estimate saturates, and the run is refused, with no overflow.
    let mut huge = SwarmConfig::default();
    huge.bittorrent.max_connections = MAX_SWARM_PEERS;
    huge.bittorrent.unchoke_slots = 10_000;
    huge.bittorrent.rate_window_ns = MAX_DELAY_NS;
    huge.bittorrent.rechoke_ns = 1;
    huge.access.up_queue = QueueLimit::Packets(MAX_QUEUE_PACKETS);
    huge.tcp.max_window_bytes = None;
    let at_bounds = peak_bytes_per_peer(&huge);
    assert!(at_bounds > 1000 * paper, "{at_bounds} against {paper}");
    huge.tcp.max_window_bytes = Some(u64::MAX / 2);
    huge.tcp.mss = 1;
    assert_eq!(peak_bytes_per_peer(&huge), u64::MAX);
}

/// Once the queue trace has thinned its rows, uplinks are sampled only in the rounds it keeps:
/// the last rounds lie a whole stride apart (a power of two of `queue_sample`), the table stays
/// within its bound and still spans the run.
#[test]
fn a_thinned_queue_trace_samples_only_the_rounds_it_keeps() {
    let mut cfg = small_swarm(6, 600, Population::Tcp);
    // 400 rounds of up to 7 uplinks each.
    cfg.trace.max_rows = 400;
    cfg.duration_ns = 40 * SEC;
    swarm_mut(&mut cfg).stop_after_completions = None;
    let sample_ns = swarm_mut(&mut cfg).queue_sample_ns;
    let out = crate::run(&cfg).unwrap();
    let t = &out.queues.t_ns;
    assert!(t.len() <= 400);
    let mut rounds: Vec<u64> = t.clone();
    rounds.dedup();
    let gaps: Vec<u64> = rounds.windows(2).map(|w| w[1] - w[0]).collect();
    let last = *gaps.last().unwrap();
    assert!(
        last >= 4 * sample_ns,
        "last gap {last} ns, {:?}",
        out.summary.sim_time_s
    );
    assert!(last.is_multiple_of(sample_ns) && (last / sample_ns).is_power_of_two());
    // The rounds after the last thinning are evenly spaced.
    let tail = &gaps[gaps.len() - 3..];
    assert!(tail.iter().all(|&g| g == last), "{tail:?}");
    let end_ns = (out.summary.sim_time_s * 1e9) as u64;
    assert!(rounds[0] < end_ns / 10 && *rounds.last().unwrap() + last > end_ns);
}

/// The traced peers' uploads are recorded as a flow's sender is: a series per half whose
/// uploader is traced and none other, each starting with at most the initial window, its
/// delivered bytes never falling, and the run itself unchanged by the watching.
#[test]
fn traced_peers_uploads_are_recorded_like_a_flows_sender() {
    let cfg = small_swarm(6, 600, Population::Mixed);
    let plain = crate::run(&cfg).unwrap();
    assert!(plain.flows.is_empty());
    let mut traced_cfg = cfg.clone();
    swarm_mut(&mut traced_cfg).traced_peers = 3;
    let mut sim = SwarmSim::new(&traced_cfg).unwrap();
    let end = sim.advance();
    let uploaders: Vec<u32> = (0..sim.halves()).map(|h| sim.ends(h).0).collect();
    let traced = sim.finish(end);
    assert_eq!(
        serde_json::to_string(&plain.summary).unwrap(),
        serde_json::to_string(&traced.summary).unwrap()
    );
    let t = &traced.flows;
    let mut series: Vec<u32> = t.flow.clone();
    series.sort_unstable();
    series.dedup();
    let mss = cfg.swarm.as_ref().unwrap().tcp.mss;
    for &h in &series {
        assert!(
            uploaders[h as usize] < 3,
            "half {h} is not a traced peer's upload"
        );
        let rows: Vec<usize> = (0..t.len()).filter(|&i| t.flow[i] == h).collect();
        let first = rows[0];
        assert!((mss..=10 * mss).contains(&t.cwnd_bytes[first]), "half {h}");
        let delivered: Vec<u64> = rows.iter().map(|&i| t.delivered_bytes[i]).collect();
        assert!(delivered.windows(2).all(|w| w[0] <= w[1]), "half {h}");
    }
    // Every half the traced peers wrote to has its series.
    let written = (0..uploaders.len() as u32)
        .filter(|&h| uploaders[h as usize] < 3)
        .count();
    assert!(series.len() > 1 && series.len() <= written, "{series:?}");
}

/// A swarm's progress is told its peers and completions as the run goes; stopped there, its
/// summary says the same (issue #37: a long swarm's progress line).
#[test]
fn progress_is_told_the_swarms_peers_and_completions() {
    let mut cfg = small_swarm(30, 1000, Population::Mixed);
    swarm_mut(&mut cfg).stop_after_completions = Some(25);
    let mut told = vec![];
    let out = crate::run_with(&cfg, &mut |tick| {
        let swarm = tick.swarm.expect("a swarm's tick has its status");
        told.push((tick.now_ns, swarm));
        swarm.completions < 3
    })
    .unwrap();
    let s = &out.summary;
    let swarm = s.swarm().unwrap();
    let &(now, last) = told.last().unwrap();
    assert!(
        s.interrupted,
        "stopped by progress, after {} ticks",
        told.len()
    );
    assert_eq!((s.sim_time_s * 1e9).round() as u64, now);
    assert_eq!(last.peers, swarm.peers_joined);
    assert_eq!(last.completions, swarm.completions);
    assert!(last.completions >= 3);
    assert!(told.iter().all(|(_, t)| t.stop_after == Some(25)));
    assert!(told.windows(2).all(|w| w[0].1.peers <= w[1].1.peers));
    assert!(told
        .windows(2)
        .all(|w| w[0].1.completions <= w[1].1.completions));
    // Peers joined before the first completion.
    assert!(told[0].1.peers > 1, "{:?}", told[0]);
}
