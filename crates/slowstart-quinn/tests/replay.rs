//! The adapter driven by quinn's own calls, recorded from real transfers (`slowstart-quinn
//! client --calls`, through the emulated path of `slowstart real --stack quinn`; how each file
//! was made is its first comment lines).

use slowstart_cc::Phase;
use slowstart_quinn::record::{parse_calls, replay, Call};
use slowstart_quinn::{Adapter, SlowstartFactory};

fn calls(text: &str) -> Vec<Call> {
    parse_calls(text).expect("a recorded sequence parses")
}

fn adapter(spec: &str) -> Adapter {
    SlowstartFactory::new(spec).unwrap().build_adapter(1472)
}

/// Reno through 20 Mbps, 100 ms, a 1-BDP drop-tail buffer: slow start overflows the queue and
/// quinn declares the lost packets in many batches.
const RENO_LOSS: &str = include_str!("calls/reno-20mbps-loss.txt");
/// A burst of losses long enough for persistent congestion (RFC 9002 §7.6).
const PERSISTENT: &str = include_str!("calls/persistent-congestion.txt");

fn first_loss(calls: &[Call]) -> usize {
    calls
        .iter()
        .position(|c| matches!(c, Call::Congestion { .. }))
        .expect("the recording has a loss")
}

/// Recovery episodes as RFC 9002 §7.3.2 counts them, from the calls alone: a loss batch starts
/// one when its newest lost packet was sent after the current episode started.
fn episodes(calls: &[Call]) -> usize {
    let mut start = None;
    let mut n = 0;
    for c in calls {
        if let Call::Congestion {
            t,
            sent,
            persistent: false,
            ..
        } = *c
        {
            if start.is_none_or(|s| sent > s) {
                n += 1;
                start = Some(t);
            }
        }
    }
    n
}

#[test]
fn a_loss_batch_is_one_congestion_event_per_recovery_episode() {
    let calls = calls(RENO_LOSS);
    let batches = calls
        .iter()
        .filter(|c| matches!(c, Call::Congestion { .. }))
        .count();
    let episodes = episodes(&calls);
    assert!(
        batches > 3 * episodes,
        "the recording shows quinn's batching: {batches} calls, {episodes} episodes"
    );
    let mut a = adapter("reno");
    let i = first_loss(&calls);
    replay(&mut a, &calls[..i]);
    let before = a.cwnd();
    assert_eq!(a.phase(), Phase::SlowStart);
    // Every call of the first episode: Reno halves once (RFC 5681 §3.1 as RFC 9002 §7.3.2).
    let end = calls[i..]
        .iter()
        .position(|c| {
            matches!(c, Call::Ack { sent, .. } if *sent > match calls[i] {
                Call::Congestion { t, .. } => t,
                _ => unreachable!(),
            })
        })
        .map(|k| i + k)
        .expect("the episode ends in the recording");
    replay(&mut a, &calls[i..end]);
    assert_eq!(a.congestion_events(), 1);
    assert_eq!(a.phase(), Phase::Recovery);
    assert_eq!(a.cwnd(), before / 2, "halved once for the whole episode");
    replay(&mut a, &calls[end..]);
    assert_eq!(a.congestion_events() as usize, episodes);
    assert_ne!(
        a.phase(),
        Phase::Recovery,
        "the episode's end reached the controller"
    );
}

#[test]
fn persistent_congestion_is_one_timeout() {
    let calls = calls(PERSISTENT);
    let i = calls
        .iter()
        .position(|c| {
            matches!(
                c,
                Call::Congestion {
                    persistent: true,
                    ..
                }
            )
        })
        .expect("the recording has persistent congestion");
    let mut a = adapter("cubic");
    replay(&mut a, &calls[..i]);
    let events = a.congestion_events();
    replay(&mut a, &calls[i..=i]);
    assert_eq!(a.persistent_congestions(), 1);
    assert_eq!(
        a.congestion_events(),
        events,
        "a timeout, not a congestion event"
    );
    assert_eq!(a.phase(), Phase::RtoRecovery);
    // RFC 9002 §7.6.2: the minimum window, 2 datagrams of the recording's 1472 bytes (the
    // core's 1-segment loss window is raised to it).
    assert_eq!(a.cwnd(), 2 * 1472);
}

#[test]
fn an_app_limited_period_does_not_grow_the_window() {
    // The end of the Reno transfer: every byte is sent, quinn reports app-limited while the
    // last ACKs come back.
    let calls = calls(RENO_LOSS);
    let mut a = adapter("reno");
    let mut limited_frames = 0;
    let mut frame = Vec::new();
    for c in &calls {
        frame.push(*c);
        if let Call::EndAcks { app_limited, .. } = c {
            let before = (a.cwnd(), a.phase());
            replay(&mut a, &frame);
            frame.clear();
            if *app_limited && before.1 != Phase::Recovery && a.phase() == before.1 {
                limited_frames += 1;
                assert_eq!(a.cwnd(), before.0, "grew while app-limited");
            }
        }
    }
    assert!(limited_frames > 5, "{limited_frames} app-limited frames");
}

#[test]
fn delivery_rate_samples_measure_the_bottleneck() {
    // 20 Mbps of 1500-byte IP packets carry 1472-byte UDP payloads: 2 453 333 payload bytes/s.
    let expected = 20e6 / 8.0 * 1472.0 / 1500.0;
    let calls = calls(RENO_LOSS);
    let mut a = adapter("bbr");
    let mut rates = Vec::new();
    for c in &calls {
        replay(&mut a, std::slice::from_ref(c));
        if let (Call::EndAcks { .. }, Some(r)) = (c, a.last_rate()) {
            if !r.is_app_limited {
                rates.push(r.delivery_rate as f64);
            }
        }
    }
    assert!(rates.len() > 100, "{} samples", rates.len());
    rates.sort_by(f64::total_cmp);
    let top = rates[rates.len() * 9 / 10];
    assert!(
        (top - expected).abs() < 0.05 * expected,
        "90th percentile {top:.0} B/s, bottleneck {expected:.0}"
    );
    assert!(a.pacing_rate().is_some(), "BBR paces from the samples");
}

#[test]
fn every_line_of_a_recording_reads_back_as_written() {
    for c in calls(RENO_LOSS).iter().chain(calls(PERSISTENT).iter()) {
        assert_eq!(Call::parse(&c.line()).unwrap(), *c);
    }
    for bad in [
        "sent 1",
        "ack 1 2 3 4 5 6 7",
        "end 1 2 2",
        "warp 1",
        "mtu 70000",
    ] {
        assert!(Call::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn one_way_delay_controllers_are_refused_by_name() {
    for name in ["ledbat", "utp"] {
        let err = SlowstartFactory::new(name).unwrap_err();
        assert!(err.0.contains("one-way delay"), "{err}");
    }
    let err = SlowstartFactory::new("warp").unwrap_err();
    assert!(err.0.contains("unknown algorithm 'warp'"), "{err}");
}
