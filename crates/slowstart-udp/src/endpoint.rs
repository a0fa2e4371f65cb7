//! The two endpoints of one flow over a UDP socket: a sender that writes the flow's bytes and
//! runs the controller, and a receiver that checks and acknowledges them. Each is a loop: wait
//! for a datagram or the earliest timer deadline, hand what arrived to the transport, fire the
//! timers that are due, send what the transport produced.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use serde::Serialize;
use slowstart_cc::external;
use slowstart_config::trace::{FlowTrace, Sampler};
use slowstart_config::{AppConfig, FlowConfig, FlowRecorder};
use slowstart_transport::packet::{Kind, Packet};
use slowstart_transport::sender::State;
use slowstart_transport::wire::{self, MAX_DATAGRAM};
use slowstart_transport::{ConnectionRecipe, Io, SenderEnd, SenderEvent, TimerKind};

use crate::clock::{now_ns, wait_readable};
use crate::{ecn, pattern};

/// How long a run may go on.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// End the run after this long, ns (an unbounded transfer ends here).
    pub duration_ns: u64,
    /// End with an error after this long without progress, ns.
    pub stall_ns: u64,
    /// Receiver: once the transfer is complete, keep answering until this long has passed
    /// without a datagram (the sender may not have the last ACK yet), ns.
    pub linger_ns: u64,
}

impl Limits {
    /// At `now`, for a run that started at `start` and last made progress at `progressed`:
    /// `Ok(true)` once its duration is over, an error once it stalled (`progress` says how far
    /// it got), else `Ok(false)`.
    pub(crate) fn over(
        &self,
        now: u64,
        start: u64,
        progressed: u64,
        progress: impl FnOnce() -> String,
    ) -> Result<bool, String> {
        if now - start >= self.duration_ns {
            return Ok(true);
        }
        if now - progressed >= self.stall_ns {
            return Err(format!(
                "no progress for {:.1} s: {}",
                self.stall_ns as f64 / 1e9,
                progress()
            ));
        }
        Ok(false)
    }

    /// The earliest of the run's end and the time it would count as stalled.
    pub(crate) fn next_bound(&self, start: u64, progressed: u64) -> u64 {
        (start + self.duration_ns).min(progressed + self.stall_ns)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            duration_ns: 600_000_000_000,
            stall_ns: 30_000_000_000,
            linger_ns: 1_000_000_000,
        }
    }
}

/// Largest one-way delay an ACK may report, ns; beyond it the ACK is forged or broken.
const MAX_OWD_NS: u64 = 600_000_000_000;

/// Datagrams dropped before the transport saw them, by reason.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Dropped {
    /// From an address other than the peer's.
    pub stranger: u64,
    /// Did not parse (see `slowstart_transport::wire::WireError`).
    pub unparsed: u64,
    /// Another flow's, or a kind this end does not take.
    pub unexpected: u64,
    /// An ACK of bytes never sent, SACK blocks past them, or a one-way delay out of bounds.
    pub bad_ack: u64,
    /// Data whose payload is not the stream's bytes, or past the transfer's size.
    pub bad_data: u64,
}

impl Dropped {
    pub fn total(&self) -> u64 {
        self.stranger + self.unparsed + self.unexpected + self.bad_ack + self.bad_data
    }
}

/// What a sending end's recorder writes into: the report's trace, every event's row (times
/// from the recorder's origin).
pub(crate) struct Tracing {
    pub recorder: FlowRecorder,
    pub sampler: Sampler,
}

impl Tracing {
    /// Flow `flow`'s, its rows' times counted from `origin_ns`.
    pub fn new(flow: u32, origin_ns: u64) -> Self {
        Tracing {
            recorder: FlowRecorder::new(flow, origin_ns),
            sampler: Sampler::unbounded(flow as usize + 1),
        }
    }

    /// Tell the recorder what `end`'s sender did at `now`, as the simulator does.
    pub fn notify(
        &mut self,
        end: &mut SenderEnd,
        now: u64,
        event: SenderEvent,
        trace: &mut FlowTrace,
    ) {
        end.notify(
            now,
            event,
            &mut self.recorder.observer(trace, &mut self.sampler),
        );
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct SenderReport {
    /// CLOCK_MONOTONIC at the start, ns.
    pub start_ns: u64,
    pub bytes_acked: u64,
    /// Every byte acknowledged, seconds after the start.
    pub completion_s: Option<f64>,
    pub slow_start_exit_s: Option<f64>,
    pub retransmits: u64,
    pub loss_events: u64,
    pub rto_count: u64,
    pub loss_probes: u64,
    pub data_packets_sent: u64,
    /// Window reductions on an ECN echo, for a flow that runs ECN (the simulator's
    /// `ecn_reductions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_reductions: Option<u64>,
    pub max_cwnd_bytes: u64,
    /// Paced departures: how late each left after its departure time, µs.
    pub pacing_samples: u64,
    pub pacing_late_p50_us: Option<f64>,
    pub pacing_late_p99_us: Option<f64>,
    pub dropped: Dropped,
    /// A web server's: stall round trips per object, in order (`slowstart_apps::web`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_stalls: Option<Vec<u64>>,
    /// A web server's: connections opened (one per object without keep-alive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
    /// Its state after every event the simulator samples at (start, SYN-ACK, ACK, answered
    /// requests, retransmission timeout), under the simulator's flow trace columns.
    #[serde(skip)]
    pub trace: FlowTrace,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ReceiverReport {
    /// In-order bytes received, every one checked against the stream's pattern.
    pub bytes: u64,
    /// CLOCK_MONOTONIC when the last byte arrived (transfers of known size), ns.
    pub completed_ns: Option<u64>,
    pub acks_sent: u64,
    pub dropped: Dropped,
}

/// A datagram taken for its flow: when it arrived, from where, and what it carries.
pub(crate) struct Datagram<'a> {
    pub now: u64,
    pub from: SocketAddr,
    pub packet: Packet,
    pub payload: &'a [u8],
}

/// The next datagram waiting on `sock` that comes from `peer` (any address while `None`),
/// parses, and belongs to `flow`, with its arrival time; the others are counted in `dropped`
/// and skipped. `None` once nothing is waiting.
pub(crate) fn next_datagram<'a>(
    sock: &UdpSocket,
    buf: &'a mut [u8],
    peer: Option<SocketAddr>,
    flow: u32,
    dropped: &mut Dropped,
) -> Result<Option<Datagram<'a>>, String> {
    let (now, from, p, n, payload_len) = loop {
        let (n, from, ecn) = match ecn::recv_from(sock, buf) {
            Ok(x) => x,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => continue,
            Err(e) => return Err(format!("receive: {e}")),
        };
        let now = now_ns();
        if peer.is_some_and(|a| a != from) {
            dropped.stranger += 1;
            continue;
        }
        let Ok((mut p, payload)) = wire::decode(&buf[..n]) else {
            dropped.unparsed += 1;
            continue;
        };
        p.set_ip_ecn(ecn);
        if p.flow != flow {
            dropped.unexpected += 1;
            continue;
        }
        break (now, from, p, n, payload.len());
    };
    // The payload is the datagram's tail (`wire::decode`).
    Ok(Some(Datagram {
        now,
        from,
        packet: p,
        payload: &buf[n - payload_len..n],
    }))
}

/// Send what the transport produced to `peer`, stamped with connection `conn`; data and
/// request payloads are the stream's pattern from their first byte.
pub(crate) fn send_all(
    sock: &UdpSocket,
    peer: SocketAddr,
    conn: u8,
    io: &mut Io,
    out: &mut Vec<u8>,
    payload: &mut Vec<u8>,
) -> Result<(), String> {
    for mut p in io.packets.drain(..) {
        p.conn = conn;
        payload.resize(p.len as usize, 0);
        if matches!(p.kind, Kind::Data | Kind::Request) {
            pattern::fill(p.seq, payload);
        }
        out.clear();
        wire::encode(&p, payload, out).map_err(|e| format!("encode: {e}"))?;
        match ecn::send_to(sock, out, peer, p.ip_ecn()) {
            Ok(_) => {}
            // A full socket buffer or an unreachable peer loses the datagram, as a link would.
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::ConnectionRefused
                ) => {}
            Err(e) => return Err(format!("send to {peer}: {e}")),
        }
    }
    Ok(())
}

/// Socket buffers of this size hold a window at the rates the emulator carries; without them
/// the kernel's 208 kB default drops datagrams outside the emulated link.
const SOCKET_BUFFER_BYTES: libc::c_int = 16 << 20;

/// Make `sock` an endpoint's: non-blocking, its buffers grown, each datagram's ECN field read.
pub(crate) fn prepare_socket(sock: &UdpSocket) -> Result<(), String> {
    sock.set_nonblocking(true).map_err(|e| e.to_string())?;
    grow_buffers(sock);
    ecn::receive_ecn(sock).map_err(|e| format!("IP_RECVTOS: {e}"))
}

/// Grow the socket's buffers: past `net.core.rmem_max` as root (SO_RCVBUFFORCE), else as far
/// as the limit lets.
fn grow_buffers(sock: &UdpSocket) {
    let fd = sock.as_raw_fd();
    let size = SOCKET_BUFFER_BYTES;
    for (force, plain) in [
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
    ] {
        let set = |opt| unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                &size as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if set(force) != 0 {
            set(plain);
        }
    }
}

pub(crate) fn percentile_us(sorted: &[u64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    Some(sorted[i] as f64 / 1e3)
}

/// Check an ACK against what was sent before the sender sees it.
pub(crate) fn ack_acceptable(p: &Packet, highest_sent: u64, now: u64) -> bool {
    p.seq <= highest_sent
        && (0..p.sack_count as usize).all(|i| p.sack_block(i).1 <= highest_sent)
        && p.owd_ns <= MAX_OWD_NS
        && p.sent_ns <= now
}

/// What flow `flow`'s connections are made from, its controller seeded with `seed`, its
/// transport settings checked (an error names the flow's field).
pub(crate) fn checked_recipe(
    cfg: &FlowConfig,
    flow: u32,
    seed: u64,
) -> Result<ConnectionRecipe, String> {
    let recipe = cfg.connection_recipe(flow, seed);
    recipe
        .settings
        .validate()
        .map_err(|e| format!("flow.{e}"))?;
    Ok(recipe)
}

/// A user's controller that faulted (it then holds its last good window) ends the run: the
/// error says so and the fault's line stays in this thread's slot for the caller to take
/// ([`external::take_fault`]; `cli::main` prints it), as the simulator's engine takes it.
pub(crate) fn stop_on_fault() -> Result<(), String> {
    if external::faulted() {
        return Err("its controller faulted (external::take_fault has the line)".into());
    }
    Ok(())
}

/// `send` and `recv` run bulk flows; web flows have roles of their own.
fn require_bulk(cfg: &FlowConfig) -> Result<(), String> {
    match cfg.app {
        AppConfig::Bulk => Ok(()),
        _ => Err(format!(
            "app: a {} flow runs as server and client, not send and recv",
            cfg.app.kind()
        )),
    }
}

/// Fire the sending end's timers that are due at `now`; each paced departure's lateness (ns)
/// goes into `late`. A retransmission timeout among them is reported to `tracing` as it fires.
pub(crate) fn fire_due_timers(
    end: &mut SenderEnd,
    now: u64,
    io: &mut Io,
    late: &mut Vec<u64>,
    tracing: &mut Tracing,
    trace: &mut FlowTrace,
) {
    let obs = &mut tracing.recorder.observer(trace, &mut tracing.sampler);
    end.handle_timeouts_observed(now, io, obs, |fired| {
        if fired.kind == TimerKind::Pacing {
            late.push(now - fired.deadline);
        }
    });
}

/// Send flow `flow` (its bulk application: `size_bytes`, or unbounded until the duration) to
/// `peer` from `sock`, with the controller seeded by `seed`.
pub fn run_sender(
    sock: &UdpSocket,
    peer: SocketAddr,
    cfg: &FlowConfig,
    flow: u32,
    seed: u64,
    limits: &Limits,
) -> Result<SenderReport, String> {
    let recipe = checked_recipe(cfg, flow, seed)?;
    require_bulk(cfg)?;
    let cc = recipe.controller().map_err(|e| format!("cc: {e}"))?;
    let mut end = recipe.sender_end(cc);
    let s = &mut end.sender;
    match cfg.size_bytes {
        Some(n) => {
            s.write(n);
            s.close();
        }
        None => s.write(u64::MAX),
    }
    prepare_socket(sock)?;
    let fd = sock.as_raw_fd();
    let mut io = Io::default();
    let (mut out, mut payload) = (Vec::new(), Vec::new());
    let mut buf = vec![0u8; MAX_DATAGRAM + 1];
    let mut report = SenderReport::default();
    let mut late = Vec::new();
    let start = now_ns();
    report.start_ns = start;
    external::set_clock_origin(start);
    external::take_fault(); // an earlier run's on this thread is not this one's
    s.start(start, cfg.handshake, &mut io);
    let mut tracing = Tracing::new(flow, start);
    tracing.notify(&mut end, start, SenderEvent::Start, &mut report.trace);
    send_all(sock, peer, 0, &mut io, &mut out, &mut payload)?;
    let mut last_progress = (start, 0u64);
    let seconds = |t: u64| (t - start) as f64 / 1e9;
    loop {
        stop_on_fault()?;
        let now = now_ns();
        let s = &end.sender;
        if s.state() == State::Done {
            report.completion_s = Some(seconds(now));
            break;
        }
        if limits.over(now, start, last_progress.0, || {
            format!("{} bytes acknowledged", s.acked_bytes())
        })? {
            break;
        }
        let bound = limits.next_bound(start, last_progress.0);
        let deadline = end.poll_timeout().map_or(bound, |t| t.min(bound));
        if wait_readable(fd, deadline) {
            while let Some(Datagram { now, packet: p, .. }) =
                next_datagram(sock, &mut buf, Some(peer), flow, &mut report.dropped)?
            {
                let d = &mut report.dropped;
                match p.kind {
                    Kind::Ack if !ack_acceptable(&p, end.sender.highest_sent_bytes(), now) => {
                        d.bad_ack += 1
                    }
                    Kind::SynAck | Kind::Ack => {
                        if let Some(e) = end.handle_packet(now, &p, &mut io).sender_event() {
                            tracing.notify(&mut end, now, e, &mut report.trace);
                        }
                    }
                    _ => d.unexpected += 1,
                }
                send_all(sock, peer, 0, &mut io, &mut out, &mut payload)?;
            }
        }
        let now = now_ns();
        let trace = &mut report.trace;
        fire_due_timers(&mut end, now, &mut io, &mut late, &mut tracing, trace);
        send_all(sock, peer, 0, &mut io, &mut out, &mut payload)?;
        let s = &end.sender;
        if s.acked_bytes() > last_progress.1 {
            last_progress = (now, s.acked_bytes());
        }
    }
    let s = &end.sender;
    let m = tracing.recorder.metrics();
    report.max_cwnd_bytes = m.max_cwnd_bytes;
    report.slow_start_exit_s = m.slow_start_exit_ns.map(seconds);
    let st = tracing.recorder.stats(s);
    report.bytes_acked = s.acked_bytes();
    report.retransmits = st.retransmits;
    report.loss_events = st.loss_events;
    report.rto_count = st.rto_count;
    report.loss_probes = st.loss_probes;
    report.data_packets_sent = st.data_packets_sent;
    report.ecn_reductions = recipe.settings.ecn.then_some(st.ecn_reductions);
    late.sort_unstable();
    report.pacing_samples = late.len() as u64;
    report.pacing_late_p50_us = percentile_us(&late, 0.5);
    report.pacing_late_p99_us = percentile_us(&late, 0.99);
    Ok(report)
}

/// Receive flow `flow` on `sock` from the first address that opens it (a SYN, or data when
/// the flow has no handshake), checking every byte against the stream's pattern.
pub fn run_receiver(
    sock: &UdpSocket,
    cfg: &FlowConfig,
    flow: u32,
    limits: &Limits,
) -> Result<ReceiverReport, String> {
    // The receiving end runs no controller: its seed is not used.
    let recipe = checked_recipe(cfg, flow, 0)?;
    require_bulk(cfg)?;
    let mut end = recipe.receiver_end(None);
    prepare_socket(sock)?;
    let fd = sock.as_raw_fd();
    let mut io = Io::default();
    let (mut out, mut payload) = (Vec::new(), Vec::new());
    let mut buf = vec![0u8; MAX_DATAGRAM + 1];
    let mut report = ReceiverReport::default();
    let mut peer: Option<SocketAddr> = None;
    let start = now_ns();
    let mut last_datagram = start;
    let mut last_progress = (start, 0u64);
    loop {
        let now = now_ns();
        if end.receiver.completed_ns().is_some() && now - last_datagram >= limits.linger_ns {
            break;
        }
        if limits.over(now, start, last_progress.0, || {
            format!("{} bytes received", end.receiver.rcv_nxt())
        })? {
            break;
        }
        let mut deadline = limits.next_bound(start, last_progress.0);
        if let Some(d) = end.poll_timeout() {
            deadline = deadline.min(d);
        }
        if end.receiver.completed_ns().is_some() {
            deadline = deadline.min(last_datagram + limits.linger_ns);
        }
        if wait_readable(fd, deadline) {
            while let Some(Datagram {
                now,
                from,
                packet: p,
                payload: body,
            }) = next_datagram(sock, &mut buf, peer, flow, &mut report.dropped)?
            {
                let d = &mut report.dropped;
                let opens = p.kind == Kind::Syn || (p.kind == Kind::Data && !cfg.handshake);
                if peer.is_none() && !opens {
                    d.unexpected += 1;
                    continue;
                }
                match p.kind {
                    Kind::Syn => {}
                    Kind::Data => {
                        let last = p.seq + p.len as u64; // no overflow: checked by decode
                        let past_size = cfg.size_bytes.is_some_and(|size| last > size);
                        if past_size || pattern::first_mismatch(p.seq, body).is_some() {
                            d.bad_data += 1;
                            continue;
                        }
                    }
                    _ => {
                        d.unexpected += 1;
                        continue;
                    }
                }
                let _ = end.handle_packet(now, &p, &mut io);
                peer = Some(from);
                last_datagram = now;
                send_all(sock, from, 0, &mut io, &mut out, &mut payload)?;
            }
        }
        let now = now_ns();
        end.handle_timeouts(now, &mut io, |_| {});
        if let Some(to) = peer {
            send_all(sock, to, 0, &mut io, &mut out, &mut payload)?;
        }
        if end.receiver.rcv_nxt() > last_progress.1 {
            last_progress = (now, end.receiver.rcv_nxt());
        }
    }
    report.bytes = end.receiver.rcv_nxt();
    report.completed_ns = end.receiver.completed_ns();
    report.acks_sent = end.receiver.acks_sent();
    Ok(report)
}
