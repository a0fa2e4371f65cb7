//! Transfers over the loopback interface: no root, no emulator. Every algorithm completes one,
//! and one completes through a relay that mangles, duplicates, reorders, replays and forges
//! datagrams both ways without a panic or a corrupted byte delivered.

use std::collections::BTreeMap;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use slowstart_cc::external::{self, Event, Guest, GuestFactory, Outputs};
use slowstart_cc::params::ParamValue;
use slowstart_cc::{CcError, CommonParams};
use slowstart_cc::{CcSpec, Phase};
use slowstart_config::{AppConfig, FlowConfig, LossDetection, Recovery, WebConfig};
use slowstart_transport::packet::{Kind, IP_CE, IP_ECT0, IP_ECT1};
use slowstart_transport::wire;
use slowstart_udp::ecn;
use slowstart_udp::{
    run_client, run_receiver, run_sender, run_server, ClientReport, Limits, ReceiverReport,
    SenderReport, ServerOptions,
};

const MS: u64 = 1_000_000;

fn flow(cc: &str, size: u64) -> FlowConfig {
    FlowConfig {
        src: "sender".into(),
        dst: "receiver".into(),
        cc: CcSpec::named(cc),
        size_bytes: Some(size),
        start_ns: 0,
        mss: 1460,
        header_bytes: 40,
        initcwnd: 10,
        initrwnd: 10,
        // A window the loopback socket buffers hold, so losses come from the relay's drops.
        max_rwnd_bytes: Some(100 * 1460),
        max_window_bytes: None,
        handshake: true,
        delayed_ack: true,
        delack_timeout_ns: 40 * MS,
        ack_every: 2,
        quickack: false,
        abc: true,
        min_rto_ns: 200 * MS,
        max_rto_ns: 10_000 * MS,
        pacing: false,
        pacer: Default::default(),
        recovery: Recovery::Prr,
        loss_detection: LossDetection::Rack,
        ecn: false,
        ecn_feedback: Default::default(),
        receiver_ecn: Default::default(),
        ecn_reduction: Default::default(),
        cwnd_limited: Default::default(),
        app: AppConfig::Bulk,
        program: None,
    }
}

fn limits() -> Limits {
    Limits {
        duration_ns: 60_000 * MS,
        stall_ns: 15_000 * MS,
        linger_ns: 500 * MS,
    }
}

fn local() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").unwrap()
}

/// Run a receiver on its own thread and a sender towards `peer` (the receiver, or a relay).
fn transfer(
    cfg: &FlowConfig,
    sender: UdpSocket,
    receiver: UdpSocket,
    peer: SocketAddr,
) -> (Result<SenderReport, String>, Result<ReceiverReport, String>) {
    let rcfg = cfg.clone();
    let rx = thread::spawn(move || run_receiver(&receiver, &rcfg, 0, &limits()));
    let tx = run_sender(&sender, peer, cfg, 0, 1, &limits());
    (tx, rx.join().expect("receiver thread"))
}

#[test]
fn every_algorithm_completes_a_transfer_over_loopback() {
    for algo in slowstart_cc::registry::ALGORITHMS {
        let size = 400_000;
        let cfg = flow(algo.name, size);
        let (s, r) = (local(), local());
        let peer = r.local_addr().unwrap();
        let (tx, rx) = transfer(&cfg, s, r, peer);
        let (tx, rx) = (tx.unwrap(), rx.unwrap());
        assert_eq!(rx.bytes, size, "{}", algo.name);
        assert!(rx.completed_ns.is_some(), "{}", algo.name);
        assert_eq!(tx.bytes_acked, size, "{}", algo.name);
        assert!(tx.completion_s.is_some(), "{}", algo.name);
        assert_eq!(tx.dropped.total() + rx.dropped.total(), 0, "{}", algo.name);
        assert!(!tx.trace.is_empty());
    }
}

/// What the relay does to a datagram on its way.
fn mangle(
    rng: &mut Xoshiro256PlusPlus,
    d: &[u8],
    history: &mut Vec<Vec<u8>>,
    held: &mut Option<Vec<u8>>,
) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let roll: f64 = rng.random();
    if let Ok((p, body)) = wire::decode(d) {
        let mut forged = p;
        let mut buf = Vec::new();
        match p.kind {
            // Data or a request whose payload is not the stream's bytes, sent before the
            // original.
            Kind::Data | Kind::Request if roll < 0.03 => {
                let mut bad = body.to_vec();
                let i = rng.random_range(0..bad.len());
                bad[i] ^= 0x55;
                wire::encode(&p, &bad, &mut buf).unwrap();
                out.push(buf);
            }
            // An ACK of data never sent, and SACK blocks past the end.
            Kind::Ack if roll < 0.03 => {
                forged.seq = p.seq + 1_000_000_000;
                wire::encode(&forged, &[], &mut buf).unwrap();
                out.push(buf);
            }
            Kind::Ack if roll < 0.06 => {
                forged.sack_count = 0;
                let mut f = forged;
                f.push_sack(p.seq + 3_000_000, p.seq + 4_000_000);
                wire::encode(&f, &[], &mut buf).unwrap();
                out.push(buf);
            }
            _ => {}
        }
    }
    let roll: f64 = rng.random();
    if roll < 0.02 {
        let cut = rng.random_range(0..d.len());
        out.push(d[..cut].to_vec()); // truncated
    } else if roll < 0.03 {
        let n = rng.random_range(0..2000);
        out.push((0..n).map(|_| rng.random()).collect()); // random bytes
    } else if roll < 0.035 {
        out.push(vec![0x53; 60_000]); // oversized
    } else if roll < 0.045 {
        let mut v = d.to_vec();
        v[2] = 9; // wrong version
        out.push(v);
    } else if roll < 0.06 && history.len() > 50 {
        out.push(history[rng.random_range(0..history.len() - 50)].clone()); // replayed
    }
    history.push(d.to_vec());
    let roll: f64 = rng.random();
    if roll < 0.02 {
        return out; // lost
    }
    if roll < 0.05 {
        out.push(d.to_vec()); // duplicated
    }
    if roll < 0.08 && held.is_none() {
        *held = Some(d.to_vec()); // reordered: leaves after the next one
        return out;
    }
    out.push(d.to_vec());
    if let Some(h) = held.take() {
        out.push(h);
    }
    out
}

/// Forward datagrams arriving on `from` to `dest` through `via`, mangled, until `stop`.
fn relay(from: UdpSocket, via: UdpSocket, dest: SocketAddr, seed: u64, stop: Arc<AtomicBool>) {
    from.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut history, mut held) = (Vec::new(), None);
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::SeqCst) {
        let Ok(n) = from.recv(&mut buf) else {
            continue;
        };
        for d in mangle(&mut rng, &buf[..n], &mut history, &mut held) {
            let _ = via.send_to(&d, dest);
        }
    }
}

#[test]
fn a_transfer_completes_through_a_hostile_relay_and_delivers_no_corrupted_byte() {
    let size = 1_500_000;
    let cfg = flow("reno", size);
    let (s, r) = (local(), local());
    let (s_addr, r_addr) = (s.local_addr().unwrap(), r.local_addr().unwrap());
    // The sender talks to `a`, the receiver hears from `b`.
    let (a, b) = (local(), local());
    let a_addr = a.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let forward = {
        let (a, b, stop) = (a.try_clone().unwrap(), b.try_clone().unwrap(), stop.clone());
        thread::spawn(move || relay(a, b, r_addr, 1, stop))
    };
    let back = {
        let stop = stop.clone();
        thread::spawn(move || relay(b, a, s_addr, 2, stop))
    };
    let (tx, rx) = transfer(&cfg, s, r, a_addr);
    stop.store(true, Ordering::SeqCst);
    forward.join().unwrap();
    back.join().unwrap();
    let (tx, rx) = (tx.unwrap(), rx.unwrap());
    assert_eq!(rx.bytes, size);
    assert_eq!(tx.bytes_acked, size);
    assert!(rx.dropped.bad_data > 0, "{:?}", rx.dropped);
    assert!(rx.dropped.unparsed > 0, "{:?}", rx.dropped);
    assert!(tx.dropped.bad_ack > 0, "{:?}", tx.dropped);
    assert!(tx.dropped.unparsed > 0, "{:?}", tx.dropped);
    assert!(tx.retransmits > 0);
}

/// What a marking relay saw and did: datagrams by the ECN field they arrived with, `[Not-ECT,
/// ECT(1), ECT(0), CE]`, and the data datagrams it marked CE.
#[derive(Debug, Default)]
struct EcnSeen {
    data: [u64; 4],
    acks: [u64; 4],
    marked: u64,
}

/// Forward datagrams arriving on `from` to `dest` through `via`, each with the ECN field it
/// arrived with, until `stop`; with `mark_every`, every that-many-th ECN-capable data datagram
/// leaves marked CE instead, as a queue above its step would send it.
fn ecn_relay(
    from: UdpSocket,
    via: UdpSocket,
    dest: SocketAddr,
    mark_every: Option<u64>,
    stop: Arc<AtomicBool>,
) -> EcnSeen {
    ecn::receive_ecn(&from).unwrap();
    from.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    // Room for a whole window (the kernel's 208 kB default drops a burst of 100 datagrams), so
    // that any loss would be the relay's doing: it drops none.
    let bytes: libc::c_int = 8 << 20;
    for opt in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
        // SAFETY: a valid descriptor and an `int` option of its size.
        let set = unsafe {
            libc::setsockopt(
                from.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                &bytes as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if set == 0 {
            break; // forced past rmem_max as root, else as far as it lets
        }
    }
    let mut seen = EcnSeen::default();
    let mut capable = 0u64;
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::SeqCst) {
        let Ok((n, _, mut field)) = ecn::recv_from(&from, &mut buf) else {
            continue;
        };
        let Ok((p, _)) = wire::decode(&buf[..n]) else {
            continue;
        };
        if p.kind == Kind::Data {
            seen.data[field as usize] += 1;
            if field == IP_ECT0 || field == IP_ECT1 {
                capable += 1;
                if mark_every.is_some_and(|k| capable.is_multiple_of(k)) {
                    field = IP_CE;
                    seen.marked += 1;
                }
            }
        } else if p.kind == Kind::Ack {
            seen.acks[field as usize] += 1;
        }
        ecn::send_to(&via, &buf[..n], dest, field).unwrap();
    }
    seen
}

/// ECN end to end over loopback: the sender's socket writes ECT into each data datagram's IP
/// header, a relay reads it there and marks every 20th CE, the receiver's socket reads the
/// mark and the receiver echoes it in the transport's header, and the sender reduces its
/// window without a loss. DCTCP's data goes out ECT(0) and Prague's ECT(1) (L4S); Reno
/// without `ecn` sends Not-ECT, which is never marked.
#[test]
fn ce_marks_set_on_the_way_reach_the_receiver_and_the_sender_reduces() {
    let size = 3_000_000;
    for (cc, ecn_flow, field) in [
        ("dctcp", false, IP_ECT0),
        ("prague", false, IP_ECT1),
        ("reno", true, IP_ECT0),
        ("reno", false, 0),
    ] {
        let mut cfg = flow(cc, size);
        cfg.ecn = ecn_flow;
        let (s, r) = (local(), local());
        let (s_addr, r_addr) = (s.local_addr().unwrap(), r.local_addr().unwrap());
        let (a, b) = (local(), local());
        let a_addr = a.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let forward = {
            let (a, b, stop) = (a.try_clone().unwrap(), b.try_clone().unwrap(), stop.clone());
            thread::spawn(move || ecn_relay(a, b, r_addr, Some(20), stop))
        };
        let back = {
            let stop = stop.clone();
            thread::spawn(move || ecn_relay(b, a, s_addr, None, stop))
        };
        let (tx, rx) = transfer(&cfg, s, r, a_addr);
        stop.store(true, Ordering::SeqCst);
        let (fwd, rev) = (forward.join().unwrap(), back.join().unwrap());
        let (tx, rx) = (tx.unwrap(), rx.unwrap());
        let what = format!("{cc} ecn={ecn_flow}: {fwd:?} {rev:?} {tx:?}");
        assert_eq!((rx.bytes, tx.bytes_acked), (size, size), "{what}");
        // Every data datagram arrived at the relay with the flow's codepoint.
        let sent: u64 = fwd.data.iter().sum();
        assert_eq!(fwd.data[field as usize], sent, "{what}");
        assert_eq!(tx.retransmits, 0, "{what}");
        if field == 0 {
            assert_eq!((fwd.marked, tx.ecn_reductions), (0, None), "{what}");
            continue;
        }
        assert_eq!(fwd.marked, sent / 20, "{what}");
        // The receiver echoed the marks and the sender reduced on them.
        assert!(tx.ecn_reductions.unwrap() > 0, "{what}");
        // DCTCP and Prague (needs_ecn) send their ACKs ECT as Linux does; RFC 3168's do not.
        let ect_acks = rev.acks[IP_ECT0 as usize];
        assert_eq!(ect_acks > 0, !ecn_flow, "{what}");
    }
}

#[test]
fn a_transfer_with_no_answer_ends_with_one_error() {
    let cfg = flow("reno", 100_000);
    let (s, silent) = (local(), local());
    let mut l = limits();
    l.stall_ns = 1_500 * MS;
    let err = run_sender(&s, silent.local_addr().unwrap(), &cfg, 0, 1, &l).unwrap_err();
    assert_eq!(err, "no progress for 1.5 s: 0 bytes acknowledged");
}

/// A user's controller that answers ten segments, and a window of 0 from its `zero_at`th ACK.
struct ZeroAt {
    mss: u64,
    acks: u32,
    zero_at: u32,
}

impl ZeroAt {
    fn outputs(&self) -> Outputs {
        Outputs {
            cwnd: if self.acks >= self.zero_at {
                0
            } else {
                10 * self.mss
            },
            ssthresh: u64::MAX,
            pacing_rate: None,
            send_quantum: None,
            phase: Phase::SlowStart,
        }
    }
}

impl Guest for ZeroAt {
    fn call(&mut self, event: Event<'_>) -> Result<Outputs, String> {
        if let Event::Ack(_) = event {
            self.acks += 1;
        }
        Ok(self.outputs())
    }
}

impl GuestFactory for ZeroAt {
    fn build(
        &self,
        _: &BTreeMap<String, ParamValue>,
        common: &CommonParams,
    ) -> Result<(Box<dyn Guest>, Outputs), CcError> {
        let g = ZeroAt {
            mss: common.mss,
            acks: 0,
            zero_at: self.zero_at,
        };
        let out = g.outputs();
        Ok((Box::new(g), out))
    }
}

#[test]
fn a_controller_that_faults_ends_the_sender_with_its_line() {
    external::register(
        "test-zero-at-20",
        Arc::new(ZeroAt {
            mss: 0,
            acks: 0,
            zero_at: 20,
        }),
    );
    let cfg = flow("test-zero-at-20", 10_000_000);
    let (s, r) = (local(), local());
    let peer = r.local_addr().unwrap();
    let rcfg = cfg.clone();
    // The receiver, left without data, ends at its duration.
    let rx = thread::spawn(move || {
        let l = Limits {
            duration_ns: 2_000 * MS,
            ..limits()
        };
        run_receiver(&r, &rcfg, 0, &l)
    });
    let tx = run_sender(&s, peer, &cfg, 0, 1, &limits());
    rx.join()
        .expect("receiver thread")
        .expect("the receiver ends at its duration");
    let err = tx.expect_err("the sender stops at the fault");
    assert!(err.contains("controller faulted"), "{err}");
    let fault = external::take_fault().expect("the fault's line, left for the caller");
    // Its time counts from the sender's start, not the host's clock: on loopback, 20 ACKs
    // come within milliseconds (10 s for a loaded machine).
    let at: f64 = fault
        .strip_prefix("cc test-zero-at-20: on_ack at ")
        .and_then(|rest| rest.split(" s: ").next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{fault}"));
    assert!(at < 10.0, "{fault}");
    assert!(
        fault.ends_with(
            ": cwnd() returned 0 (accepted: 1460..=1125899906842624 bytes, one MSS to 2^50)"
        ),
        "{fault}"
    );
}

fn web_flow(objects: u64, keep_alive: bool) -> FlowConfig {
    let mut f = flow("cubic", 0);
    f.size_bytes = None;
    f.app = AppConfig::Web(WebConfig {
        request_bytes: 400,
        response_bytes: vec![17_000, 60_000],
        objects: Some(objects),
        keep_alive,
    });
    f
}

/// A server on its own thread and a client towards `peer` (the server, or a relay).
fn fetch(
    cfg: &FlowConfig,
    server: UdpSocket,
    client: UdpSocket,
    peer: SocketAddr,
) -> (Result<SenderReport, String>, Result<ClientReport, String>) {
    let scfg = cfg.clone();
    let client_addr = client.local_addr().unwrap();
    let opts = ServerOptions {
        seed: 1,
        ..Default::default()
    };
    let srv = thread::spawn(move || run_server(&server, client_addr, &scfg, 0, &opts, &limits()));
    let c = run_client(&client, peer, cfg, 0, &limits());
    (srv.join().expect("server thread"), c)
}

#[test]
fn web_objects_arrive_with_and_without_keep_alive() {
    for keep_alive in [true, false] {
        let cfg = web_flow(5, keep_alive);
        let (s, c) = (local(), local());
        let peer = s.local_addr().unwrap();
        let (srv, cl) = fetch(&cfg, s, c, peer);
        let (srv, cl) = (srv.unwrap(), cl.unwrap());
        let sizes = [17_000, 60_000, 17_000, 60_000, 17_000];
        let got: Vec<u64> = cl.web.objects.iter().map(|o| o.bytes).collect();
        assert_eq!(got, sizes, "keep_alive {keep_alive}");
        assert_eq!(cl.bytes, sizes.iter().sum::<u64>());
        assert_eq!(srv.bytes_acked, cl.bytes);
        // One connection per object without keep-alive, on both ends.
        let conns = if keep_alive { 1 } else { 5 };
        assert_eq!((cl.connections, srv.connections), (conns, Some(conns)));
        assert_eq!(srv.object_stalls.as_ref().map(Vec::len), Some(5));
        assert!(cl.web.objects.iter().all(|o| o.stalls.is_none()));
        // Every object's first byte comes a round trip or more after it was wanted.
        assert!(cl
            .web
            .objects
            .iter()
            .all(|o| o.ttfb_s > 0.0 && o.total_s >= o.ttfb_s));
        assert_eq!(cl.web.request_packets, 5);
        assert_eq!(cl.dropped.total() + srv.dropped.total(), 0);
    }
}

#[test]
fn web_objects_arrive_through_a_hostile_relay_uncorrupted() {
    for keep_alive in [true, false] {
        let cfg = web_flow(12, keep_alive);
        let (s, c) = (local(), local());
        let (s_addr, c_addr) = (s.local_addr().unwrap(), c.local_addr().unwrap());
        // The client talks to `a`, the server to `b`; the relay carries each way between.
        let (a, b) = (local(), local());
        let a_addr = a.local_addr().unwrap();
        let b_addr = b.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let forward = {
            let (a, b, stop) = (a.try_clone().unwrap(), b.try_clone().unwrap(), stop.clone());
            thread::spawn(move || relay(a, b, s_addr, 3, stop))
        };
        let back = {
            let stop = stop.clone();
            thread::spawn(move || relay(b, a, c_addr, 4, stop))
        };
        let scfg = cfg.clone();
        let opts = ServerOptions {
            seed: 1,
            ..Default::default()
        };
        let srv = thread::spawn(move || run_server(&s, b_addr, &scfg, 0, &opts, &limits()));
        let cl = run_client(&c, a_addr, &cfg, 0, &limits());
        let srv = srv.join().unwrap();
        stop.store(true, Ordering::SeqCst);
        forward.join().unwrap();
        back.join().unwrap();
        let (srv, cl) = (srv.unwrap(), cl.unwrap());
        assert_eq!(cl.web.objects.len(), 12, "keep_alive {keep_alive}");
        assert_eq!(cl.bytes, 6 * 17_000 + 6 * 60_000);
        assert!(cl.dropped.bad_data > 0, "{:?}", cl.dropped);
        assert!(cl.dropped.unparsed > 0, "{:?}", cl.dropped);
        assert!(srv.dropped.unparsed > 0, "{:?}", srv.dropped);
        assert!(srv.dropped.bad_ack > 0, "{:?}", srv.dropped);
    }
}
