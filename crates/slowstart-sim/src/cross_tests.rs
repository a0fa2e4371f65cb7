//! Cross traffic end to end: its bytes are conserved, a constant rate delivers rate × time,
//! and what it takes from a shared bottleneck a Reno flow loses.

use crate::sim::Simulation;
use slowstart_config::testing::{flow, path, MS, SEC};
use slowstart_config::{CrossConfig, QueueLimit, SimConfig};

fn cbr(rate_bps: u64, start_ns: u64, stop_ns: Option<u64>) -> CrossConfig {
    CrossConfig {
        kind: "cbr".into(),
        src: "sender".into(),
        dst: "receiver".into(),
        rate_bps: Some(rate_bps),
        packet_bytes: 1500,
        start_ns,
        stop_ns,
        on_ns: None,
        off_ns: None,
        distribution: None,
    }
}

/// 10 Mbps, 50 ms, a 50-packet drop-tail buffer, one unbounded Reno flow held to `window`
/// segments (`None`: unlimited).
fn shared(window: Option<u64>, cross: Vec<CrossConfig>) -> SimConfig {
    let mut f = flow("reno", None);
    f.max_window_bytes = window.map(|w| w * 1460);
    let mut cfg = path(
        10_000_000,
        50 * MS,
        QueueLimit::Packets(50),
        vec![f],
        vec![],
    );
    cfg.cross = cross;
    cfg
}

#[test]
fn cross_bytes_are_conserved_through_a_drop_tail_link() {
    // 12 Mbps into 10: the buffer overflows and drops both the source's packets and the flow's.
    let mut cfg = shared(None, vec![cbr(12_000_000, SEC, Some(4 * SEC))]);
    cfg.duration_ns = 3 * SEC; // stop mid-run, with packets in the links
    let mut sim = Simulation::new(&cfg).unwrap();
    let end = sim.advance();
    let (sent, delivered, dropped, held) = sim.cross_ledger(0);
    assert!(dropped > 0 && held > 0, "{dropped} {held}");
    assert_eq!(sent, delivered + dropped + held);
    let (fs, fr, fd, fh) = sim.byte_ledger(0);
    assert_eq!(fs, fr + fd + fh);
    let out = sim.finish(end);
    let c = &out.summary.cross[0].counts;
    assert_eq!(c.bytes_sent, c.packets_sent * 1500);
    assert_eq!(c.bytes_dropped, c.packets_dropped * 1500);
    // The link counts the source's drops beside the flow's.
    let link = &out.summary.links[2];
    assert_eq!(
        link.drops,
        c.packets_dropped + out.summary.flows[0].drops,
        "{link:?}"
    );
}

#[test]
fn cbr_delivers_rate_times_time_within_one_packet() {
    // 3 Mbps for 2.5 s beside a flow held to 10 segments (about 2.3 Mbps): the link is not full.
    let (rate, start, stop) = (3_000_000u64, 1_500 * MS, 4 * SEC);
    let cfg = shared(Some(10), vec![cbr(rate, start, Some(stop))]);
    let out = Simulation::new(&cfg).unwrap().run();
    let c = &out.summary.cross[0].counts;
    let expected = rate * (stop - start) / SEC / 8;
    assert_eq!(c.packets_dropped, 0);
    assert!(
        c.bytes_delivered.abs_diff(expected) <= 1500,
        "{} vs {expected}",
        c.bytes_delivered
    );
    let bps = out.summary.cross[0].delivered_bps;
    assert!((bps - rate as f64).abs() <= 1500.0 * 8.0 / 2.5, "{bps}");
}

#[test]
fn reno_loses_what_the_cbr_takes_from_a_shared_bottleneck() {
    let mut alone = shared(None, vec![]);
    alone.duration_ns = 40 * SEC;
    let mut beside = alone.clone();
    beside.cross = vec![cbr(3_000_000, 0, None)];
    let g_alone = Simulation::new(&alone).unwrap().run().summary.flows[0].goodput_bps;
    let out = Simulation::new(&beside).unwrap().run();
    let g_beside = out.summary.flows[0].goodput_bps;
    // What the source got through, as the flow's payload would be on the same wire bytes.
    let taken = out.summary.cross[0].delivered_bps * 1460.0 / 1500.0;
    let lost = g_alone - g_beside;
    assert!(taken > 2.5e6, "{taken}");
    assert!(
        (lost - taken).abs() < 0.05 * taken,
        "alone {g_alone}, beside {g_beside}: lost {lost}, the source took {taken}"
    );
}

#[test]
fn on_off_runs_are_deterministic_with_the_seed() {
    let mut src = cbr(8_000_000, 0, None);
    src.kind = "onoff".into();
    src.on_ns = Some(200 * MS);
    src.off_ns = Some(300 * MS);
    let mut cfg = shared(None, vec![src]);
    cfg.duration_ns = 10 * SEC;
    let run = |cfg: &SimConfig| {
        let out = Simulation::new(cfg).unwrap().run();
        serde_json::to_string(&out.summary).unwrap()
    };
    let first = run(&cfg);
    assert_eq!(first, run(&cfg));
    cfg.seed = 2;
    assert_ne!(first, run(&cfg));
}

#[test]
fn validation_names_the_scenario_field() {
    let check = |edit: &dyn Fn(&mut CrossConfig), want: &str| {
        let mut c = cbr(1_000_000, 0, None);
        edit(&mut c);
        let cfg = shared(None, vec![c]);
        let e = cfg.validate().unwrap_err().0;
        assert!(e.starts_with(want), "{e}");
    };
    check(&|c| c.rate_bps = None, "cross.0.rate: missing");
    check(&|c| c.rate_bps = Some(0), "cross.0.rate: must be in 1..=");
    check(
        &|c| c.packet_bytes = 20,
        "cross.0.packet_size: must be in 28..=65535",
    );
    check(
        &|c| c.on_ns = Some(1),
        "cross.0.on: only for kind = \"onoff\"",
    );
    check(
        &|c| c.kind = "poisson".into(),
        "cross.0.kind: expected one of cbr, onoff",
    );
    check(
        &|c| c.dst = "moon".into(),
        "cross.0.dst: unknown node 'moon'",
    );
    check(&|c| c.stop_ns = Some(0), "cross.0.stop: must be in 1..=");
    check(
        &|c| {
            c.kind = "onoff".into();
            c.distribution = Some("pareto".into());
        },
        "cross.0.distribution: expected one of exponential, fixed",
    );
}

/// A source built outside a simulation (as the link emulator builds them) with
/// [`source_seed`] sends exactly what the simulated one sends: same seed, same periods.
#[test]
fn a_source_seeded_with_source_seed_sends_as_simulated() {
    use slowstart_link::cross::{source_seed, CrossSource};
    let mut on_off = cbr(6_000_000, 100 * MS, None);
    on_off.kind = "onoff".into();
    on_off.on_ns = Some(150 * MS);
    on_off.off_ns = Some(250 * MS);
    let mut cfg = shared(Some(10), vec![cbr(1_000_000, 0, None), on_off]);
    cfg.duration_ns = 20 * SEC;
    cfg.run_to_end = true;
    for seed in [0, 1, 77] {
        cfg.seed = seed;
        let out = Simulation::new(&cfg).unwrap().run();
        for (k, c) in cfg.cross.iter().enumerate() {
            let mut s = CrossSource::new(c, 0, 0, 1, cfg.duration_ns, source_seed(seed, k));
            while let Some(t) = s.next_send() {
                s.send(t);
            }
            assert_eq!(
                s.counts.packets_sent, out.summary.cross[k].counts.packets_sent,
                "seed {seed}, source {k}"
            );
        }
    }
}
