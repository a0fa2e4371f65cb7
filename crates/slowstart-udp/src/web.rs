//! A web flow's two ends over UDP: the server (`src`, the data sender) and the client (`dst`,
//! the data receiver and the request stream), each driving its half of the simulator's web
//! application (`slowstart_apps::web`: [`WebServer`], [`WebClient`]) as the engine does,
//! with the host's clock.
//!
//! The client is the active end, as an HTTP client is: its request opens the connection
//! (request packets of a connection the server has not seen, the next one, from byte 0), and
//! the server then starts a fresh sender, whose handshake runs before the first byte leaves (as
//! TCP Fast Open carries the request in the SYN). So an object's first byte still arrives two
//! round trips after it was wanted, as in the simulation (where the sender's SYN leaves at the
//! instant the client wants the connection). Without keep-alive each object has a connection
//! of its own, numbered in the header's `conn`; datagrams of another connection are dropped.
//!
//! The server counts each object's stalls until its last byte is acknowledged (the simulation,
//! seeing both ends, until it reaches the client); `slowstart real` puts them into the
//! client's summary.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use serde::Serialize;
use slowstart_apps::web::{ClientEnd, Delivered, WebClient, WebServer, WebSummary};
use slowstart_cc::external;
use slowstart_config::{AppConfig, FlowConfig, WebConfig};
use slowstart_transport::packet::{Kind, Packet};
use slowstart_transport::sender::SenderStats;
use slowstart_transport::wire::MAX_DATAGRAM;
use slowstart_transport::{EarlierReceivers, Io, Observer, Received, SenderEnd, SenderEvent};

use crate::clock::{now_ns, wait_readable};
use crate::endpoint::{
    ack_acceptable, checked_recipe, fire_due_timers, next_datagram, percentile_us, prepare_socket,
    send_all, stop_on_fault, Datagram, Dropped, Limits, SenderReport, Tracing,
};
use crate::pattern;

fn web_config(cfg: &FlowConfig) -> Result<&WebConfig, String> {
    match &cfg.app {
        AppConfig::Web(w) => Ok(w),
        other => Err(format!(
            "app: server and client run web flows, not {}",
            other.kind()
        )),
    }
}

/// Request packets whose payload is not the request stream's pattern, or past what a client
/// asks for in all, are not the client's.
fn request_acceptable(p: &Packet, body: &[u8], web: &WebConfig) -> bool {
    let most = web.request_bytes.saturating_mul(web.object_count());
    p.seq + p.len as u64 <= most && pattern::first_mismatch(p.seq, body).is_none()
}

/// One connection's server end.
struct Conn {
    id: u8,
    /// The data sender and the request stream's receiving side.
    end: SenderEnd,
}

/// How a server runs, beyond its flow.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerOptions {
    /// The controller's seed.
    pub seed: u64,
    /// The flow's start on the monotonic clock, ns: trace times count from it (default: when
    /// the server starts).
    pub origin: Option<u64>,
    /// Payload bytes of a path BDP (`slowstart_config::stall_threshold`): round trips spent
    /// waiting on a window with less in flight count as stalls (default: every one).
    pub stall_threshold: Option<u64>,
}

/// Serve flow `flow` (a web application) to the client at `peer` from `sock`: answer every
/// complete request with its object; a request of the next connection opens it. Ends once
/// every object is acknowledged.
pub fn run_server(
    sock: &UdpSocket,
    peer: SocketAddr,
    cfg: &FlowConfig,
    flow: u32,
    opts: &ServerOptions,
    limits: &Limits,
) -> Result<SenderReport, String> {
    let (seed, origin, stall_threshold) = (opts.seed, opts.origin, opts.stall_threshold);
    let web = web_config(cfg)?;
    let mut recipe = checked_recipe(cfg, flow, seed)?;
    recipe.stall_threshold = stall_threshold;
    recipe.controller().map_err(|e| format!("cc: {e}"))?;
    let mut server = WebServer::new(web);
    let mut conn: Option<Conn> = None;
    let mut connections = 0u64;
    prepare_socket(sock)?;
    let fd = sock.as_raw_fd();
    let mut io = Io::default();
    let (mut out, mut payload) = (Vec::new(), Vec::new());
    let mut buf = vec![0u8; MAX_DATAGRAM + 1];
    let mut report = SenderReport::default();
    let mut late = Vec::new();
    let start = now_ns();
    let origin = origin.unwrap_or(start).min(start);
    report.start_ns = origin;
    let mut tracing = Tracing::new(flow, origin);
    external::set_clock_origin(origin);
    external::take_fault(); // an earlier run's on this thread is not this one's
    let mut last_progress = (start, 0u64);
    let seconds = |t: u64| (t - origin) as f64 / 1e9;
    loop {
        stop_on_fault()?;
        let now = now_ns();
        if server.finished() {
            report.completion_s = Some(seconds(now));
            break;
        }
        let before = tracing.recorder.delivered_before();
        let acked = before + conn.as_ref().map_or(0, |c| c.end.sender.acked_bytes());
        if limits.over(now, start, last_progress.0, || {
            format!(
                "{} of {} objects answered, {acked} bytes acknowledged",
                server.answered(),
                web.object_count()
            )
        })? {
            break;
        }
        let mut deadline = limits.next_bound(start, last_progress.0);
        if let Some(d) = conn.as_ref().and_then(|c| c.end.poll_timeout()) {
            deadline = deadline.min(d);
        }
        if wait_readable(fd, deadline) {
            while let Some(Datagram {
                now,
                packet: p,
                payload: body,
                ..
            }) = next_datagram(sock, &mut buf, Some(peer), flow, &mut report.dropped)?
            {
                let d = &mut report.dropped;
                let current = conn.as_ref().map(|c| c.id);
                if p.kind == Kind::Request && current != Some(p.conn) {
                    let next = current.map_or(0, |c| c.wrapping_add(1));
                    if p.conn != next || p.seq != 0 || server.answered() == web.object_count() {
                        d.unexpected += 1;
                        continue;
                    }
                    if !request_acceptable(&p, body, web) {
                        d.bad_data += 1;
                        continue;
                    }
                    // A new connection: fresh sender and controller, from the recipe the
                    // simulation's reconnect (sim.rs) uses.
                    if let Some(old) = conn.take() {
                        let old = &old.end.sender;
                        server.on_new_connection(old.stats().stalls);
                        let (rec, sampler) = (&mut tracing.recorder, &mut tracing.sampler);
                        rec.observer(&mut report.trace, sampler)
                            .on_replaced(now, old);
                    }
                    let mut end = recipe.sender_end(recipe.rebuilt_controller());
                    end.sender.start(now, cfg.handshake, &mut io);
                    tracing.notify(&mut end, now, SenderEvent::Start, &mut report.trace);
                    connections += 1;
                    conn = Some(Conn { id: p.conn, end });
                }
                let Some(c) = conn.as_mut().filter(|c| c.id == p.conn) else {
                    d.unexpected += 1;
                    continue;
                };
                let end = &mut c.end;
                match p.kind {
                    Kind::Request if !request_acceptable(&p, body, web) => {
                        d.bad_data += 1;
                        continue;
                    }
                    Kind::Ack if !ack_acceptable(&p, end.sender.highest_sent_bytes(), now) => {
                        d.bad_ack += 1
                    }
                    // As the engine takes them (sim.rs `deliver`).
                    Kind::Request | Kind::SynAck | Kind::Ack => {
                        let received = end.handle_packet(now, &p, &mut io);
                        let event = match received {
                            Received::Request { advanced, upto } => {
                                if advanced {
                                    server.on_requests(upto, &mut end.sender);
                                }
                                end.answer_requests(now, &mut io, |s, io| s.try_send(now, io));
                                Some(SenderEvent::Requests)
                            }
                            Received::Ack(_) => {
                                let s = &end.sender;
                                server.on_acked(s.acked_bytes(), s.stats().stalls);
                                received.sender_event()
                            }
                            _ => received.sender_event(),
                        };
                        if let Some(e) = event {
                            tracing.notify(end, now, e, &mut report.trace);
                        }
                    }
                    _ => d.unexpected += 1,
                }
                send_all(sock, peer, c.id, &mut io, &mut out, &mut payload)?;
            }
        }
        let now = now_ns();
        let Some(c) = conn.as_mut() else {
            continue;
        };
        let trace = &mut report.trace;
        fire_due_timers(&mut c.end, now, &mut io, &mut late, &mut tracing, trace);
        send_all(sock, peer, c.id, &mut io, &mut out, &mut payload)?;
        let s = &c.end.sender;
        let acked = tracing.recorder.delivered_before() + s.acked_bytes();
        if acked > last_progress.1 {
            last_progress = (now, acked);
        }
    }
    // Without a connection the flow never started: nothing was counted.
    let rec = &tracing.recorder;
    let st = conn
        .as_ref()
        .map_or_else(SenderStats::default, |c| rec.stats(&c.end.sender));
    report.bytes_acked = conn.as_ref().map_or(0, |c| rec.delivered(&c.end.sender));
    report.max_cwnd_bytes = rec.metrics().max_cwnd_bytes;
    report.slow_start_exit_s = rec.metrics().slow_start_exit_ns.map(seconds);
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
    report.object_stalls = Some(server.stalls().to_vec());
    report.connections = Some(connections);
    Ok(report)
}

#[derive(Clone, Debug, Serialize)]
pub struct ClientReport {
    /// CLOCK_MONOTONIC at the start (the first object is wanted from then), ns.
    pub start_ns: u64,
    /// Response bytes received in order over every connection, each checked against the
    /// stream's pattern.
    pub bytes: u64,
    /// CLOCK_MONOTONIC when the first object's first byte and the last object's last byte
    /// arrived, ns.
    pub first_byte_ns: Option<u64>,
    pub last_byte_ns: Option<u64>,
    pub acks_sent: u64,
    pub connections: u64,
    /// The application's summary; stalls are the server's to count (null here).
    pub web: WebSummary,
    pub dropped: Dropped,
}

/// Fetch flow `flow`'s objects (a web application) from the server at `peer` over `sock`,
/// one at a time, checking every byte against the stream's pattern.
pub fn run_client(
    sock: &UdpSocket,
    peer: SocketAddr,
    cfg: &FlowConfig,
    flow: u32,
    limits: &Limits,
) -> Result<ClientReport, String> {
    let web = web_config(cfg)?;
    // The client's end runs no controller: its seed is not used.
    let recipe = checked_recipe(cfg, flow, 0)?;
    prepare_socket(sock)?;
    let fd = sock.as_raw_fd();
    let mut io = Io::default();
    let (mut out, mut payload) = (Vec::new(), Vec::new());
    let mut buf = vec![0u8; MAX_DATAGRAM + 1];
    let mut dropped = Dropped::default();
    let start = now_ns();
    let mut client = WebClient::new(web, start);
    let mut conn: u8 = 0;
    let mut end = recipe.receiver_end(None);
    let (mut earlier, mut connections) = (EarlierReceivers::default(), 1u64);
    client.on_established(&mut ClientEnd {
        now: start,
        receiver: &mut end.receiver,
        requests: &mut end.requests,
        io: &mut io,
    });
    send_all(sock, peer, conn, &mut io, &mut out, &mut payload)?;
    let mut last_datagram = start;
    let mut last_progress = (start, 0u64);
    loop {
        let now = now_ns();
        if client.finished() && now - last_datagram >= limits.linger_ns {
            break;
        }
        let bytes = earlier.bytes(&end.receiver);
        if limits.over(now, start, last_progress.0, || {
            format!("{bytes} bytes received")
        })? {
            break;
        }
        let mut deadline = limits.next_bound(start, last_progress.0);
        if let Some(d) = end.poll_timeout() {
            deadline = deadline.min(d);
        }
        if client.finished() {
            deadline = deadline.min(last_datagram + limits.linger_ns);
        }
        if wait_readable(fd, deadline) {
            while let Some(Datagram {
                now,
                packet: p,
                payload: body,
                ..
            }) = next_datagram(sock, &mut buf, Some(peer), flow, &mut dropped)?
            {
                if p.conn != conn {
                    dropped.unexpected += 1;
                    continue;
                }
                let mut reconnect = false;
                match p.kind {
                    Kind::Data => {
                        let last = p.seq + p.len as u64; // no overflow: checked by decode
                        if last > client.requested_end()
                            || pattern::first_mismatch(p.seq, body).is_some()
                        {
                            dropped.bad_data += 1;
                            continue;
                        }
                    }
                    Kind::Syn | Kind::RequestAck => {}
                    _ => {
                        dropped.unexpected += 1;
                        continue;
                    }
                }
                // As the engine delivers data to a web client (sim.rs `deliver`).
                if let Received::Data { before, upto } = end.handle_packet(now, &p, &mut io) {
                    if upto > before {
                        let mut app_end = ClientEnd {
                            now,
                            receiver: &mut end.receiver,
                            requests: &mut end.requests,
                            io: &mut io,
                        };
                        reconnect =
                            client.on_delivered(upto, &mut app_end) == Delivered::ObjectReconnect;
                    }
                }
                last_datagram = now;
                // What this connection produced leaves under its own number.
                send_all(sock, peer, conn, &mut io, &mut out, &mut payload)?;
                if reconnect {
                    // A new connection with fresh streams; its request opens it.
                    earlier.add(&end.receiver);
                    conn = conn.wrapping_add(1);
                    connections += 1;
                    end = recipe.receiver_end(Some(&end));
                    client.on_established(&mut ClientEnd {
                        now,
                        receiver: &mut end.receiver,
                        requests: &mut end.requests,
                        io: &mut io,
                    });
                    send_all(sock, peer, conn, &mut io, &mut out, &mut payload)?;
                }
            }
        }
        let now = now_ns();
        end.handle_timeouts(now, &mut io, |_| {});
        send_all(sock, peer, conn, &mut io, &mut out, &mut payload)?;
        let bytes = earlier.bytes(&end.receiver);
        if bytes > last_progress.1 {
            last_progress = (now, bytes);
        }
    }
    let times = client.first_and_last_byte_ns();
    Ok(ClientReport {
        start_ns: start,
        bytes: earlier.bytes(&end.receiver),
        first_byte_ns: times.map(|t| t.0),
        last_byte_ns: times.map(|t| t.1),
        acks_sent: earlier.acks_sent(&end.receiver),
        connections,
        web: client.summary(None, &end.requests),
        dropped,
    })
}
