//! End-to-end checks of the engine and transport against analytic results and invariants.

use crate::sim::Simulation;
use slowstart_config::testing::{flow, path, MS, SEC};
use slowstart_config::trace::FlowTrace;
use slowstart_config::{DropSpec, QueueLimit};

/// cwnd of the last sample at or before `t`.
fn cwnd_at(trace: &FlowTrace, t: u64) -> u64 {
    let i = trace.t_ns.partition_point(|&x| x <= t);
    trace.cwnd_bytes[i - 1]
}

#[test]
fn slow_start_doubles_every_rtt_without_delayed_acks() {
    let mut f = flow("reno", None);
    f.delayed_ack = false;
    let mut cfg = path(
        10_000_000_000,
        100 * MS,
        QueueLimit::Packets(100_000),
        vec![f],
        vec![],
    );
    cfg.duration_ns = 1_000 * MS;
    let out = Simulation::new(&cfg).unwrap().run();
    // Handshake takes one RTT; the first data ACKs arrive one RTT later.
    for k in 0..8u64 {
        let mid_round = (2 + k) * 100 * MS + 50 * MS;
        assert_eq!(
            cwnd_at(&out.flows, mid_round),
            (10 * 1460) << (k + 1),
            "round {k}"
        );
    }
    assert_eq!(out.summary.flows[0].loss_events, 0);
}

#[test]
fn congestion_avoidance_adds_one_mss_per_rtt() {
    let mut f = flow("reno", None);
    f.delayed_ack = false;
    // A drop at segment 200 ends slow start; the window then grows linearly, never
    // filling the 1 Gbps x 100 ms pipe (8 562 segments) in this run.
    let mut cfg = path(
        1_000_000_000,
        100 * MS,
        QueueLimit::Packets(100_000),
        vec![f],
        vec![DropSpec { flow: 0, seq: 200 }],
    );
    cfg.duration_ns = 6 * SEC;
    let out = Simulation::new(&cfg).unwrap().run();
    assert_eq!(out.summary.flows[0].loss_events, 1);
    let growth: Vec<u64> = (0..20u64)
        .map(|k| {
            let t = 3 * SEC + k * 100 * MS;
            cwnd_at(&out.flows, t + 100 * MS) - cwnd_at(&out.flows, t)
        })
        .collect();
    assert!(growth.iter().all(|&g| g == 1460), "{growth:?}");
}

#[test]
fn bytes_are_conserved_under_loss() {
    let mut f = flow("reno", None);
    f.recovery = slowstart_config::Recovery::Prr;
    let mut cfg = path(
        20_000_000,
        60 * MS,
        QueueLimit::Packets(30),
        vec![f.clone(), f],
        vec![],
    );
    cfg.links[1].forward.loss = 0.01;
    cfg.duration_ns = 5 * SEC + 123 * MS;
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.advance();
    for flow in 0..2 {
        let (sent, received, dropped, held) = sim.byte_ledger(flow);
        assert!(dropped > 0, "the test needs losses");
        assert_eq!(sent, received + dropped + held, "flow {flow}");
    }
}

#[test]
fn finite_transfer_completes_and_delivers_every_byte() {
    let size = 3_000_000;
    let mut cfg = path(
        50_000_000,
        40 * MS,
        QueueLimit::Packets(50),
        vec![flow("reno", Some(size))],
        vec![],
    );
    cfg.links[1].forward.loss = 0.005;
    let out = Simulation::new(&cfg).unwrap().run();
    let f = &out.summary.flows[0];
    assert_eq!(f.bytes_delivered, size);
    let completion = f.completion_s.expect("completes");
    // At least the handshake, one RTT per doubling and the serialisation of every byte.
    assert!(completion > 0.04 + size as f64 * 8.0 / 50e6, "{completion}");
    // Mathis et al.: 1.22 MSS / (RTT sqrt(p)) = 5.0 Mbps at p = 0.5%, so about 4.8 s; allow
    // for the slow start, timeouts and the randomness of 1 500 loss draws.
    assert!(completion < 10.0, "{completion}");
}

#[test]
fn same_seed_same_output() {
    let run = || {
        let mut cfg = path(
            20_000_000,
            50 * MS,
            QueueLimit::Packets(20),
            vec![flow("reno", None), flow("reno", None)],
            vec![],
        );
        cfg.links[1].forward.loss = 0.002;
        cfg.links[1].forward.jitter_ns = 2 * MS;
        cfg.duration_ns = 3 * SEC;
        let out = Simulation::new(&cfg).unwrap().run();
        (
            serde_json::to_string(&out.summary).unwrap(),
            out.flows.cwnd_bytes,
            out.queues.queue_bytes,
        )
    };
    let a = run();
    assert_eq!(a, run());
    assert!(a.0.contains("\"retransmits\""));
}

/// The queue kind is the engine's parameter, not the model's: flows run over the swarm's
/// calendar queue give the same bytes as over their own heaps (both pop in time, then
/// insertion order), here with losses, jitter and a web flow's timers.
#[test]
fn either_queue_gives_the_same_run() {
    use crate::engine::{CalendarQueue, Event};
    use crate::sim::FlowStart;
    use slowstart_config::{AppConfig, BittorrentConfig, WebConfig};
    let mut web = flow("cubic", None);
    web.app = AppConfig::Web(WebConfig {
        request_bytes: 400,
        response_bytes: vec![40_000],
        objects: Some(5),
        keep_alive: false,
    });
    let mut bittorrent = flow("reno", None);
    bittorrent.app = AppConfig::Bittorrent(BittorrentConfig::default());
    let mut cfg = path(
        20_000_000,
        50 * MS,
        QueueLimit::Packets(20),
        vec![
            flow("reno", None),
            flow("bbr", Some(2_000_000)),
            web,
            bittorrent,
        ],
        vec![],
    );
    cfg.links[1].forward.loss = 0.002;
    cfg.links[1].forward.jitter_ns = 2 * MS;
    cfg.duration_ns = 3 * SEC;
    let bytes = |out: crate::RunOutput| {
        (
            serde_json::to_string(&out.summary).unwrap(),
            out.flows.cwnd_bytes,
            out.queues.queue_bytes,
        )
    };
    let heaps = bytes(Simulation::new(&cfg).unwrap().run());
    let calendar = Simulation::<CalendarQueue<Event<FlowStart>>>::with_queue(&cfg)
        .unwrap()
        .run();
    assert!(
        calendar.summary.events > 10_000,
        "{}",
        calendar.summary.events
    );
    assert_eq!(heaps, bytes(calendar));
}

#[test]
fn window_cap_and_full_bandwidth_are_reached() {
    let mut f = flow("reno", None);
    f.max_window_bytes = Some(200 * 1460);
    // 200 segments over 50 ms is 46.7 Mbps of payload: the window, not the 100 Mbps link, limits.
    let cfg = path(
        100_000_000,
        50 * MS,
        QueueLimit::Packets(1000),
        vec![f],
        vec![],
    );
    let out = Simulation::new(&cfg).unwrap().run();
    let s = &out.summary.flows[0];
    let cap = s.time_to_window_cap_s.expect("cwnd reaches the cap");
    let full = s.time_to_full_bw_s.expect("reaches 95% of cap/RTT");
    assert!(cap < 0.5 && full < 0.6, "{cap} {full}");
    assert_eq!(s.loss_events, 0);
    // The sender never has more than the cap in flight.
    assert!(out.flows.inflight_bytes.iter().all(|&b| b <= 200 * 1460));
}

#[test]
fn receiver_window_limits_the_first_flight() {
    let mut f = flow("reno", Some(100_000));
    f.initcwnd = 20;
    f.initrwnd = 4;
    f.delayed_ack = false;
    let cfg = path(
        1_000_000_000,
        50 * MS,
        QueueLimit::Packets(1000),
        vec![f],
        vec![],
    );
    let out = Simulation::new(&cfg).unwrap().run();
    // In flight never exceeds the advertised window: 4 segments before the first ACK.
    let first_data_round = out.flows.t_ns.iter().position(|&t| t >= 50 * MS).unwrap();
    assert!(out.flows.inflight_bytes[first_data_round] <= 4 * 1460);
}

/// Floyd's early-loss path (net100 seed), the four standard-TCP rows: run with
/// `cargo test --release -- --ignored --nocapture floyd` to see the numbers.
#[test]
#[ignore]
fn floyd_early_loss_standard_tcp() {
    for (mss, delayed_ack, published) in [
        (1460, false, 284.0),
        (1460, true, 577.0),
        (8960, false, 47.0),
        (8960, true, 91.0),
    ] {
        let mut f = flow("reno", None);
        f.delayed_ack = delayed_ack;
        f.abc = false;
        f.handshake = false;
        f.initcwnd = 2;
        f.mss = mss;
        f.max_window_bytes = Some(3500 * 1460);
        let bdp = 500_000_000 / 8 * 80 / 1000;
        let mut cfg = path(
            500_000_000,
            80 * MS,
            QueueLimit::Bytes(2 * bdp),
            vec![f],
            vec![DropSpec { flow: 0, seq: 40 }],
        );
        cfg.duration_ns = (published as u64 + 60) * SEC;
        cfg.trace.flow_interval_ns = 10 * MS;
        let t = std::time::Instant::now();
        let out = Simulation::new(&cfg).unwrap().run();
        let wall = t.elapsed().as_secs_f64();
        let s = &out.summary.flows[0];
        eprintln!(
            "mss {mss} delack {delayed_ack}: cap at {:?} s (published {published}), ssthresh exit {:?}; {} events in {wall:.2}s = {:.1} M/s",
            s.time_to_window_cap_s,
            s.slow_start_exit_s,
            out.summary.events,
            out.summary.events as f64 / wall / 1e6
        );
    }
}

/// A fixed workload for instruction counts: `valgrind --tool=callgrind` on
/// `cargo test --release -- --ignored perf_probe` (instructions per event are repeatable,
/// seconds on these machines are not).
#[test]
#[ignore]
fn perf_probe() {
    let mut f = flow("reno", None);
    f.delayed_ack = false;
    f.abc = false;
    f.max_window_bytes = Some(3500 * 1460);
    let mut cfg = path(
        500_000_000,
        80 * MS,
        QueueLimit::Bytes(10_000_000),
        vec![f],
        vec![],
    );
    cfg.duration_ns = 5 * SEC;
    let out = Simulation::new(&cfg).unwrap().run();
    eprintln!("events {}", out.summary.events);
}

/// Every registered algorithm moves a 5 MB transfer over a 50 Mbps, 50 ms path with a 1-BDP
/// buffer and some random loss, conserving bytes, in a bounded time.
#[test]
fn every_algorithm_completes_a_transfer_on_a_lossy_path() {
    for algo in slowstart_cc::registry::ALGORITHMS {
        let size = 5_000_000;
        let mut cfg = path(
            50_000_000,
            50 * MS,
            QueueLimit::Bytes(312_500),
            vec![flow(algo.name, Some(size))],
            vec![],
        );
        cfg.links[1].forward.loss = 0.001;
        cfg.duration_ns = 120 * SEC;
        let mut sim = Simulation::new(&cfg).unwrap();
        let end = sim.advance();
        let (sent, received, dropped, held) = sim.byte_ledger(0);
        assert_eq!(sent, received + dropped + held, "{}", algo.name);
        let out = sim.finish(end);
        let f = &out.summary.flows[0];
        assert_eq!(
            f.bytes_delivered, size,
            "{} did not finish: {f:?}",
            algo.name
        );
        // 0.8 s at line rate; even the most timid controller finishes well within a minute.
        let done = f.completion_s.unwrap();
        assert!(done > 0.85 && done < 60.0, "{}: {done}", algo.name);
    }
}

/// With random loss on top of a slow-start overshoot some retransmissions are lost too;
/// finding them lost by time (RACK's rule) repairs them without the retransmission timer.
#[test]
fn lost_retransmissions_are_repaired_without_a_timeout() {
    let mut cfg = path(
        50_000_000,
        50 * MS,
        QueueLimit::Bytes(312_500),
        vec![flow("reno", Some(5_000_000))],
        vec![],
    );
    cfg.links[1].forward.loss = 0.01;
    let out = Simulation::new(&cfg).unwrap().run();
    let f = &out.summary.flows[0];
    assert!(f.lost_retransmissions > 0, "{f:?}");
    assert_eq!(f.rto_count, 0, "{f:?}");
    assert_eq!(f.bytes_delivered, 5_000_000);
}

/// A star of asymmetric access links (an ADSL-like swarm): flows between leaves cross the hub,
/// and each is limited by its sender's uplink.
#[test]
fn star_of_asymmetric_access_links_routes_through_the_hub() {
    use slowstart_config::{LinkConfig, SimConfig, TraceConfig};
    let adsl = |name: &str| {
        let mut l =
            path(8_000_000, 20 * MS, QueueLimit::Packets(50), vec![], vec![]).links[1].clone();
        l.name = name.into();
        l.a = name.into();
        l.b = "hub".into();
        l.forward.rate_bps = 1_000_000; // uplink
        l.reverse.rate_bps = 8_000_000; // downlink
        l
    };
    let links: Vec<LinkConfig> = ["p0", "p1", "p2"].iter().map(|n| adsl(n)).collect();
    let mut f01 = flow("reno", Some(200_000));
    (f01.src, f01.dst) = ("p0".into(), "p1".into());
    let mut f21 = flow("reno", Some(200_000));
    (f21.src, f21.dst) = ("p2".into(), "p1".into());
    let cfg = SimConfig {
        name: "star".into(),
        seed: 3,
        duration_ns: 30 * SEC,
        nodes: vec!["hub".into(), "p0".into(), "p1".into(), "p2".into()],
        links,
        flows: vec![f01, f21],
        cross: vec![],
        trace: TraceConfig::default(),
        run_to_end: false,
        swarm: None,
    };
    let out = Simulation::new(&cfg).unwrap().run();
    for f in &out.summary.flows {
        assert_eq!(f.bytes_delivered, 200_000);
        assert_eq!(f.bottleneck_bps, 1_000_000, "the sender's uplink");
        // 10 ms per access link, two links each way.
        assert!((f.base_rtt_s - 0.04).abs() < 1e-9, "{}", f.base_rtt_s);
        // 200 kB through a 1 Mbps uplink takes at least 1.6 s.
        assert!(f.completion_s.unwrap() > 1.6);
    }
    let p1_down = out
        .summary
        .links
        .iter()
        .find(|l| l.name == "p1:reverse")
        .unwrap();
    assert!(
        p1_down.forwarded > 2 * 137,
        "both flows' data reach p1 over its downlink"
    );
}

/// The last three segments of a transfer are lost: nothing above them is SACKed, so RFC 6675
/// alone waits for the retransmission timer, while a tail loss probe (RFC 8985 §7) elicits the
/// SACK that lets RACK mark them and recover at once.
#[test]
fn tail_loss_probe_recovers_tail_losses_without_a_timeout() {
    let run = |detection: slowstart_config::LossDetection| {
        let mut f = flow("reno", Some(100 * 1460));
        f.loss_detection = detection;
        let drops = (98..=100).map(|seq| DropSpec { flow: 0, seq }).collect();
        let cfg = path(
            100_000_000,
            100 * MS,
            QueueLimit::Packets(1000),
            vec![f],
            drops,
        );
        Simulation::new(&cfg).unwrap().run().summary.flows[0].clone()
    };
    let rack = run(slowstart_config::LossDetection::Rack);
    let dupthresh = run(slowstart_config::LossDetection::Dupthresh);
    assert_eq!((rack.rto_count, rack.loss_probes), (0, 1), "{rack:?}");
    assert_eq!(dupthresh.rto_count, 1, "{dupthresh:?}");
    assert_eq!(rack.bytes_delivered, 146_000);
    // The probe's SACK starts a fast recovery instead of a timeout's collapse to one segment.
    assert_eq!(rack.loss_events, 1);
    assert_eq!(rack.retransmits, 3, "the probe and the two holes below it");
}

/// After a timeout every ACK covers retransmissions, so Karn's rule gives no RTT sample; the
/// timestamp echo must (RFC 7323 §4), or srtt stays at the inflated pre-timeout value and the
/// paced sender crawls: a 250 Mbps, 600 ms path with a 3 Mbps return and an ACK every 10th
/// segment, standard slow start overflowing a 1-BDP buffer into a timeout.
#[test]
fn paced_flow_recovers_after_a_timeout_with_only_retransmissions_acked() {
    let mut f = flow("reno", Some(100_000_000));
    f.pacing = true;
    f.ack_every = 10;
    let mut cfg = path(
        250_000_000,
        600 * MS,
        QueueLimit::Bytes(18_750_000),
        vec![f],
        vec![],
    );
    cfg.links[1].reverse.rate_bps = 3_000_000;
    let out = Simulation::new(&cfg).unwrap().run();
    let f = &out.summary.flows[0];
    assert!(f.rto_count >= 1, "the overshoot ends in a timeout: {f:?}");
    assert_eq!(f.bytes_delivered, 100_000_000, "{f:?}");
    let done = f.completion_s.expect("completes");
    assert!(done < 30.0, "{f:?}");
}

/// Linux's receiver ACKs the first segments one by one (tcp_incr_quickack: with an initial
/// window of 10 segments of 1448 bytes, 14480 / (2 x 536) = 13 quick ACKs), and every segment
/// that grows its window (tcp_grow_window); otherwise every second one.
#[test]
fn quickack_acks_the_first_segments_and_window_growth_one_by_one() {
    let run = |quickack: bool, max_rwnd: Option<u64>| {
        let mut f = flow("reno", Some(40 * 1448));
        f.mss = 1448;
        f.quickack = quickack;
        f.max_rwnd_bytes = max_rwnd;
        let cfg = path(
            100_000_000,
            50 * MS,
            QueueLimit::Packets(1000),
            vec![f],
            vec![],
        );
        Simulation::new(&cfg).unwrap().run()
    };
    // Packets over the bottleneck's reverse direction: the SYN-ACK and the ACKs.
    let acks = |out: &crate::summary::RunOutput| {
        let link = out
            .summary
            .links
            .iter()
            .find(|l| l.name == "bottleneck:reverse");
        link.expect("reverse bottleneck").forwarded - 1
    };
    // A window that stops growing at 20 segments (after 5): 13 quick ACKs, then pairs.
    let clamped = run(true, Some(20 * 1448));
    assert_eq!(acks(&clamped), 13 + 14);
    // A window that keeps growing: every segment at once.
    let open = run(true, None);
    assert_eq!(acks(&open), 40);
    let plain = run(false, None);
    assert_eq!(acks(&plain), 20);
    let done = |out: &crate::summary::RunOutput| out.summary.flows[0].completion_s.unwrap();
    assert!(done(&open) < done(&plain), "quick ACKs grow cwnd sooner");
}

/// Linux's BBR v1 (`bbr1`) on a 20 Mbps, 100 ms, 1-BDP path: startup sizes cwnd at
/// 2.885 BDP and, ignoring the losses that overflow the buffer, stays in startup until the
/// bandwidth plateaus; the draft's `bbr` (cwnd gain 2, leaves on loss) leaves earlier.
#[test]
fn bbr1_startup_reaches_high_gain_cwnd_through_losses() {
    let bdp = 20_000_000 / 8 / 10;
    let run = |cc: &str| {
        let mut cfg = path(
            20_000_000,
            100 * MS,
            QueueLimit::Bytes(bdp),
            vec![flow(cc, Some(10_000_000))],
            vec![],
        );
        cfg.duration_ns = 30 * SEC;
        Simulation::new(&cfg).unwrap().run().summary.flows[0].clone()
    };
    let v1 = run("bbr1");
    let v3 = run("bbr");
    assert_eq!(v1.bytes_delivered, 10_000_000);
    let ratio = v1.max_cwnd_bytes as f64 / bdp as f64;
    assert!(ratio > 2.6 && ratio < 3.2, "bbr1 max cwnd {ratio:.2} BDP");
    assert!(
        v1.slow_start_drops > 0,
        "startup overflows the 1-BDP buffer"
    );
    let (e1, e3) = (v1.slow_start_exit_s.unwrap(), v3.slow_start_exit_s.unwrap());
    assert!(e1 > e3, "bbr1 leaves startup at {e1} s, bbr at {e3} s");
    let done = v1.completion_s.unwrap();
    assert!(done > 4.0 && done < 5.5, "{done}");
}

/// picoquic's satellite test link (250 Mbps, 600 ms, no queue limit, 100 MB, paced): with
/// picoquic's earlier growth rule (`pb_cwnd_blocked`: cwnd grows only on ACKs of packets sent
/// before the cwnd last blocked the sender) hystart-pb waits while its pacer is what holds it
/// back, so the same delay exit finds a smaller cwnd than with the later rule (grow unless
/// app-limited). Nothing is lost either way.
#[test]
fn hystart_pb_cwnd_blocked_rule_grows_less_before_the_same_exit() {
    let run = |cwnd_blocked: bool| {
        let mut f = flow("hystart-pb", Some(100_000_000));
        f.cc.params.insert(
            "pb_cwnd_blocked".into(),
            slowstart_cc::registry::ParamValue::Bool(cwnd_blocked),
        );
        f.pacing = true;
        f.initrwnd = 70_000;
        let cfg = path(
            250_000_000,
            600 * MS,
            QueueLimit::Bytes(187_500_000),
            vec![f],
            vec![],
        );
        Simulation::new(&cfg).unwrap().run().summary.flows[0].clone()
    };
    let blocked = run(true);
    let later = run(false);
    for f in [&blocked, &later] {
        assert_eq!(f.bytes_delivered, 100_000_000, "{f:?}");
        assert_eq!(f.retransmits, 0, "{f:?}");
    }
    assert!(
        blocked.max_cwnd_bytes < later.max_cwnd_bytes,
        "{blocked:?} {later:?}"
    );
    assert_eq!(blocked.slow_start_exit_s, later.slow_start_exit_s);
}

#[test]
fn progress_is_told_the_time_and_can_stop_the_run() {
    let cfg = path(
        100_000_000,
        40 * MS,
        QueueLimit::Packets(100),
        vec![flow("reno", None)],
        vec![],
    );
    let mut calls = vec![];
    let out = crate::run_with(&cfg, &mut |tick| {
        assert_eq!(tick.swarm, None, "flows have no swarm to tell of");
        calls.push((tick.now_ns, tick.end_ns));
        calls.len() < 3
    })
    .unwrap();
    assert_eq!(calls.len(), 3, "called until it said stop");
    assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0));
    assert!(calls.iter().all(|&(_, end)| end == cfg.duration_ns));
    let s = &out.summary;
    assert!(s.interrupted);
    assert_eq!((s.sim_time_s * 1e9).round() as u64, calls[2].0);
    assert_eq!(s.events, 3 * crate::PROGRESS_EVERY);
    // A run that is not stopped does not say so, and its summary has no such field.
    let whole = crate::run(&cfg).unwrap();
    assert!(!whole.summary.interrupted);
    assert!(!serde_json::to_string(&whole.summary)
        .unwrap()
        .contains("interrupted"));
}

/// Two Reno flows through a 20 Mbps bottleneck with a 1000-packet buffer under each discipline:
/// bytes are conserved (drops at dequeue included), and every AQM keeps the mean queueing delay
/// far below the drop-tail buffer's.
#[test]
fn every_discipline_conserves_bytes_and_aqms_keep_the_queue_short() {
    use slowstart_config::Discipline;
    let f = flow("reno", None);
    let mut delays = Vec::new();
    for d in [
        Discipline::DropTail,
        Discipline::Codel(Default::default()),
        Discipline::FqCodel(Default::default()),
        Discipline::Pie(Default::default()),
        Discipline::Red(slowstart_config::RedConfig {
            min_th: 50.0,
            max_th: 150.0,
            ..Default::default()
        }),
    ] {
        let mut cfg = path(
            20_000_000,
            40 * MS,
            QueueLimit::Packets(1000),
            vec![f.clone(), f.clone()],
            vec![],
        );
        cfg.links[1].forward.discipline = d.clone();
        cfg.duration_ns = 20 * SEC + 7 * MS;
        let mut sim = Simulation::new(&cfg).unwrap();
        sim.advance();
        for flow in 0..2 {
            let (sent, received, dropped, held) = sim.byte_ledger(flow);
            assert!(dropped > 0, "{}: the test needs drops", d.name());
            assert_eq!(sent, received + dropped + held, "{} flow {flow}", d.name());
        }
        let out = sim.finish(cfg.duration_ns);
        let link = &out.summary.links[2];
        assert_eq!(link.queue, (!d.is_drop_tail()).then_some(d.name()));
        delays.push((d.name(), link.mean_queue_delay_s));
    }
    let drop_tail = delays[0].1;
    assert!(drop_tail > 0.1, "{delays:?}");
    for &(name, delay) in &delays[1..] {
        assert!(delay < drop_tail / 4.0, "{name}: {delays:?}");
    }
}

/// ECN end to end (RFC 3168): CoDel with `ecn = true` marks an ECN flow's packets instead of
/// dropping them, the receiver echoes, and the sender reduces its window at most once per
/// round trip without retransmitting; a flow without ECN through the same queue is dropped.
#[test]
fn ecn_flow_through_a_marking_codel_is_marked_not_dropped() {
    use slowstart_config::Discipline;
    let run = |ecn_flow: bool| {
        let mut f = flow("cubic", None);
        f.ecn = ecn_flow;
        let mut cfg = path(
            20_000_000,
            40 * MS,
            QueueLimit::Packets(1000),
            vec![f],
            vec![],
        );
        cfg.links[1].forward.discipline = Discipline::Codel(Default::default());
        cfg.links[1].forward.ecn = true;
        cfg.duration_ns = 10 * SEC;
        let mut sim = Simulation::new(&cfg).unwrap();
        sim.advance();
        let (sent, received, dropped, held) = sim.byte_ledger(0);
        assert_eq!(sent, received + dropped + held);
        sim.finish(cfg.duration_ns).summary
    };
    let ecn = run(true);
    let (flow, link) = (&ecn.flows[0], &ecn.links[2]);
    assert_eq!((flow.drops, flow.retransmits), (0, 0), "{flow:?}");
    let marks = link.marks.expect("an ECN link counts marks");
    let reductions = flow.ecn_reductions.expect("an ECN flow counts reductions");
    assert!(
        marks > 0 && reductions > 0,
        "{marks} marks, {reductions} reductions"
    );
    assert!(reductions <= marks);
    // At most one reduction per round trip (~40-45 ms under CoDel's 5 ms target).
    assert!(reductions <= 10_000 / 40, "{reductions}");
    assert!(
        link.mean_queue_delay_s < 0.02,
        "{}",
        link.mean_queue_delay_s
    );

    let plain = run(false);
    assert_eq!(plain.links[2].marks, Some(0));
    assert!(plain.flows[0].drops > 0 && plain.flows[0].ecn_reductions.is_none());
}

/// DCTCP through a step-marking queue (RED with min_th = max_th = K, w_q = 1, no hard drop):
/// marks only, no drop; the queue stays near K and the link stays busy, as Alizadeh et al.
/// (SIGCOMM 2010, §3.3) show for K above C x RTT / 7 (here 100 Mbps x 1 ms = 8.6 packets, K = 10).
/// The same with Accurate ECN's counter as the feedback (RFC 9768). A dctcp flow that does not
/// write `ecn` turns it on, with RFC 8257's feedback.
#[test]
fn dctcp_through_a_step_marks_near_k_and_fills_the_link() {
    use slowstart_config::{CeFeedback, Discipline, RedConfig};
    const K: f64 = 10.0;
    for feedback in [CeFeedback::Dctcp, CeFeedback::Accurate] {
        let mut f = flow("dctcp", None);
        f.ecn = true;
        f.ecn_feedback = feedback;
        let mut cfg = path(
            100_000_000,
            MS,
            QueueLimit::Packets(1000),
            vec![f.clone()],
            vec![],
        );
        cfg.links[1].forward.discipline = Discipline::Red(RedConfig {
            min_th: K,
            max_th: K,
            w_q: 1.0,
            gentle: false,
            hard_drop: false,
            ..Default::default()
        });
        cfg.links[1].forward.ecn = true;
        cfg.duration_ns = 2 * SEC;
        let mut sim = Simulation::new(&cfg).unwrap();
        sim.advance();
        let summary = sim.finish(cfg.duration_ns).summary;
        let (flow, link) = (&summary.flows[0], &summary.links[2]);
        assert_eq!((flow.drops, flow.retransmits), (0, 0), "{flow:?}");
        assert!(link.marks.unwrap() > 0 && flow.ecn_reductions.unwrap() > 0);
        let goodput = flow.goodput_bps;
        assert!(goodput > 0.9 * 100e6 * 1460.0 / 1500.0, "{goodput}");
        // Packets of 1500 bytes at 100 Mbps: 0.12 ms each; the mean queue within [K/2, 2K].
        let queue_packets = link.mean_queue_delay_s / 0.12e-3;
        assert!(
            (K / 2.0..=2.0 * K).contains(&queue_packets),
            "{feedback:?}: {queue_packets} packets"
        );
    }

    let implied = slowstart_config::testing::flow("dctcp", None).transport();
    assert!(implied.ecn && implied.ecn_feedback == CeFeedback::Dctcp);
    assert!(
        !slowstart_config::testing::flow("reno", None)
            .transport()
            .ecn
    );
}

/// DualPI2 (RFC 9332) with only classic traffic is PI2 on one queue: a CUBIC flow's queue is
/// held near the 15 ms target (RFC 9332 §A.1) where drop-tail would fill the 1000 packets
/// (600 ms at 20 Mbps), and its drops come from p' squared, not from the buffer.
#[test]
fn dualpi2_holds_a_classic_flow_near_its_target() {
    use slowstart_config::{Discipline, DualPi2Config};
    let mut cfg = path(
        20_000_000,
        40 * MS,
        QueueLimit::Packets(1000),
        vec![flow("cubic", None)],
        vec![],
    );
    cfg.links[1].forward.discipline = Discipline::DualPi2(DualPi2Config::default());
    cfg.duration_ns = 30 * SEC;
    let summary = Simulation::new(&cfg).unwrap().run().summary;
    let link = &summary.links[2];
    assert!(
        (0.005..0.03).contains(&link.mean_queue_delay_s),
        "{}",
        link.mean_queue_delay_s
    );
    assert!(link.max_queue_packets < 1000, "{}", link.max_queue_packets);
    assert!(summary.flows[0].goodput_bps > 0.9 * 20e6 * 1460.0 / 1500.0);
}

/// Prague sends ECT(1) (draft-briscoe-iccrg-prague-congestion-control-04): through
/// DualPI2 its packets wait in the L queue, marked at the 1 ms step, so the queue stays far
/// below the classic 15 ms target, with marks and no drop; through a classic CoDel that marks,
/// ECT(1) is ECN-capable as ECT(0) is (RFC 9331): marked, not dropped. A prague flow turns
/// on ECN with Accurate ECN feedback.
fn paced(cc: &str) -> slowstart_config::FlowConfig {
    let mut f = flow(cc, None);
    f.pacing = true;
    f
}

#[test]
fn prague_sends_ect1_into_dualpi2s_l_queue_and_is_marked_by_a_classic_aqm() {
    use slowstart_config::{CeFeedback, CodelConfig, Discipline, DualPi2Config};
    let implied = slowstart_config::testing::flow("prague", None).transport();
    assert!(implied.ecn && implied.ecn_feedback == CeFeedback::Accurate);
    for discipline in [
        Discipline::DualPi2(DualPi2Config::default()),
        Discipline::Codel(CodelConfig::default()),
    ] {
        let mut cfg = path(
            20_000_000,
            20 * MS,
            QueueLimit::Packets(1000),
            vec![paced("prague")],
            vec![],
        );
        let name = discipline.name();
        cfg.links[1].forward.discipline = discipline;
        cfg.links[1].forward.ecn = true;
        cfg.duration_ns = 10 * SEC;
        let summary = Simulation::new(&cfg).unwrap().run().summary;
        let (flow, link) = (&summary.flows[0], &summary.links[2]);
        assert_eq!((flow.drops, flow.retransmits), (0, 0), "{name}: {flow:?}");
        assert!(link.marks.unwrap() > 0, "{name}");
        eprintln!(
            "{name}: {} {} {:?}",
            flow.goodput_bps, link.mean_queue_delay_s, link.marks
        );
        // Not a utilisation test: the initial window's burst meets the 1 ms step, the first
        // echo halves cwnd at 42 ms and the increase (0.64 segment per 20 ms RTT) is slow.
        assert!(
            flow.goodput_bps > 0.5 * 20e6,
            "{name}: {}",
            flow.goodput_bps
        );
        if name == "dualpi2" {
            assert!(
                link.mean_queue_delay_s < 0.003,
                "{}",
                link.mean_queue_delay_s
            );
        }
    }
}

/// A bulk flow over a trace-driven bottleneck (Mahimahi's format, here 12 Mbps for 5 s then
/// 3 Mbps for 5 s, repeating): deliveries follow the trace, so the goodput over whole periods
/// is close to the trace's mean of 7.5 Mbps, and the queue delay under drop-tail grows when
/// the rate falls.
#[test]
fn trace_driven_link_delivers_at_the_traces_rate() {
    let mut trace = Vec::new();
    let mut credit = 0.0;
    for t in 1..=10_000u64 {
        credit += if t <= 5000 { 1.0 } else { 0.25 };
        while credit >= 1.0 {
            trace.push(t);
            credit -= 1.0;
        }
    }
    let mut cfg = path(
        7_500_000,
        40 * MS,
        QueueLimit::Packets(100),
        vec![flow("cubic", None)],
        vec![],
    );
    cfg.links[1].forward.rate_trace_ms = trace;
    cfg.duration_ns = 40 * SEC;
    let out = Simulation::new(&cfg).unwrap().run();
    let f = &out.summary.flows[0];
    let goodput = f.bytes_delivered as f64 * 8.0 / 40.0;
    // 1460 of every 1500 bytes are payload; slow start and losses cost a little more.
    assert!(
        goodput > 0.85 * 7.5e6 && goodput < 0.98 * 7.5e6,
        "{goodput}"
    );
    let (sent, received, dropped, held) = {
        let mut sim = Simulation::new(&cfg).unwrap();
        sim.advance();
        sim.byte_ledger(0)
    };
    assert_eq!(sent, received + dropped + held);
}

#[test]
fn schema_names_the_summary_fields_and_trace_columns_in_order() {
    let s: serde_json::Value = serde_json::from_str(&crate::summary::schema_json()).unwrap();
    let flows: Vec<&str> = s["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(flows[..3], ["t_ns", "flow", "cwnd_bytes"]);
    assert_eq!(s["queues"][1], "link");
    // Field order is the struct's: the text, not a re-sorted map, carries it.
    let text = crate::summary::schema_json();
    assert!(text.find("\"id\"").unwrap() < text.find("\"bytes_delivered\"").unwrap());
    assert!(s["flow"].get("stalls").is_some() && s["link"].get("mean_queue_delay_s").is_some());
    // Fields written only when they apply are named too.
    assert!(s["flow"].get("ecn_reductions").is_some() && s["link"].get("marks").is_some());
    assert!(s["flow"]["cc"].is_string() && s["flow"]["goodput_bps"].is_number());
    // A ramp-up's phases, the ones the slow-start exit ends; not recovery or avoidance.
    let initial = s["initial_phases"].as_array().unwrap();
    assert!(initial.contains(&"slow_start".into()) && initial.contains(&"startup".into()));
    assert!(!initial.contains(&"recovery".into()) && !initial.contains(&"drain".into()));
}
