//! `slowstart-quinn check --cc SPEC`
//! `slowstart-quinn server --bind ADDR --cert CERT.der [--duration-ms N]`
//! `slowstart-quinn client --bind ADDR --peer ADDR --cert CERT.der --bytes N
//!  (--cc SPEC | --quinn-cc newreno|cubic|bbr) [--initcwnd N] [--mtu N] [--seed N]
//!  [--guest NAME=PATH.wasm] [--start-at NS] [--duration-ms N] [--trace TRACE.csv]
//!  [--qlog TRACE.sqlog] [--calls CALLS.txt]`
//!
//! `check` only builds the controller SPEC names (exit 0, or its error and exit 2), so that a
//! caller can refuse a spec before it sets up a run. Otherwise, one QUIC transfer over quinn:
//! the client connects, sends `--bytes` on one unidirectional stream, waits until the server has
//! acknowledged them all and closes the connection. The client's
//! congestion controller is a slowstart controller by the core's spec (`--cc`, through
//! [`slowstart_quinn::SlowstartFactory`]) or one of quinn's own (`--quinn-cc`). UDP payloads are
//! `--mtu` bytes (1472 by default: a 1500-byte IP packet), with MTU discovery off, so every full
//! packet has one size as in the simulation.
//!
//! The server writes its self-signed certificate (rcgen) to `--cert` and prints `listening`; the
//! client trusts that certificate. The client starts at CLOCK_MONOTONIC `--start-at` (ns) if
//! given. Each prints its report as one JSON line (times in CLOCK_MONOTONIC ns); on failure one
//! `error: ` line on stderr, exit 1 (2 for bad arguments). `--trace` writes the controller's
//! state after every ACK frame and congestion event (the simulator's flow trace columns), `--qlog` the same
//! samples as a qlog (JSON-SEQ `recovery:metrics_updated` events), `--calls` every
//! call quinn made to the controller (record::Call lines). With $SLOWSTART_PARENT set, the
//! process dies with that parent (PR_SET_PDEATHSIG).

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::congestion::{BbrConfig, Controller, ControllerFactory, CubicConfig, NewRenoConfig};
use quinn::{ClientConfig, Endpoint, EndpointConfig, ServerConfig, TransportConfig, VarInt};
use slowstart_cc::Phase;
use slowstart_config::trace::{write_csv, FlowTrace, Sampler};
use slowstart_config::FlowRecorder;
use slowstart_quinn::record::{Call, Recorder};
use slowstart_quinn::trace::{Sink, TraceRow};
use slowstart_quinn::SlowstartFactory;

/// Flow-control windows large enough never to limit a transfer the emulator can carry
/// (quinn's defaults, 1.25 MB a stream, would cap a 100 Mbps x 600 ms path at a fifth of it).
const WINDOW: u64 = 1 << 30;
/// A full QUIC packet's UDP payload in a 1500-byte IPv4 packet (20 IP + 8 UDP bytes).
const DEFAULT_MTU: u16 = 1472;

struct Args {
    role: String,
    bind: SocketAddr,
    peer: Option<SocketAddr>,
    cert: String,
    bytes: u64,
    cc: Option<SlowstartFactory>,
    quinn_cc: Option<String>,
    initcwnd: u64,
    mtu: u16,
    seed: u64,
    start_at: Option<u64>,
    duration_ms: u64,
    trace: Option<String>,
    qlog: Option<String>,
    calls: Option<String>,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let role = it
        .next()
        .ok_or("expected a role: check, server or client")?;
    if !["check", "server", "client"].contains(&role.as_str()) {
        return Err(format!(
            "role: expected check, server or client, got {role:?}"
        ));
    }
    let mut a = Args {
        role,
        bind: "0.0.0.0:0".parse().expect("an address"),
        peer: None,
        cert: String::new(),
        bytes: 0,
        cc: None,
        quinn_cc: None,
        initcwnd: slowstart_quinn::DEFAULT_INITIAL_PACKETS,
        mtu: DEFAULT_MTU,
        seed: 0,
        start_at: None,
        duration_ms: 60_000,
        trace: None,
        qlog: None,
        calls: None,
    };
    let mut bind = None;
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag}: expected a value"))?;
        let addr = |v: &str| v.parse::<SocketAddr>().map_err(|e| format!("{flag}: {e}"));
        let int = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--bind" => bind = Some(addr(&value)?),
            "--peer" => a.peer = Some(addr(&value)?),
            "--cert" => a.cert = value,
            "--bytes" => a.bytes = int(&value)?,
            "--cc" => a.cc = Some(SlowstartFactory::new(&value).map_err(|e| format!("--{e}"))?),
            "--quinn-cc" => {
                if !["newreno", "cubic", "bbr"].contains(&value.as_str()) {
                    return Err(format!(
                        "--quinn-cc: expected newreno, cubic or bbr, got {value:?}"
                    ));
                }
                a.quinn_cc = Some(value)
            }
            "--initcwnd" => a.initcwnd = int(&value)?,
            "--mtu" => {
                a.mtu = u16::try_from(int(&value)?)
                    .ok()
                    .filter(|m| (1200..=65527).contains(m))
                    .ok_or(format!("--mtu: expected 1200..=65527, got {value}"))?
            }
            "--seed" => a.seed = int(&value)?,
            "--guest" => {
                let (name, path) = value.split_once('=').ok_or(format!(
                    "--guest: expected NAME=PATH.wasm or NAME=PATH.bpf.o, got {value:?}"
                ))?;
                let bytes = std::fs::read(path).map_err(|e| format!("--guest: {path}: {e}"))?;
                let registered = if path.ends_with(".bpf.o") {
                    slowstart_bpf::register(name, &bytes)
                } else {
                    slowstart_wasm::register(name, &bytes)
                };
                registered.map_err(|e| format!("--guest: {path}: {e}"))?;
            }
            "--start-at" => a.start_at = Some(int(&value)?),
            "--duration-ms" => a.duration_ms = int(&value)?,
            "--trace" => a.trace = Some(value),
            "--qlog" => a.qlog = Some(value),
            "--calls" => a.calls = Some(value),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if a.role == "check" {
        return match a.cc {
            Some(_) => Ok(a),
            None => Err("check: --cc SPEC is needed".into()),
        };
    }
    a.bind = bind.ok_or("--bind is needed")?;
    if a.cert.is_empty() {
        return Err("--cert is needed".into());
    }
    if a.role == "client" {
        if a.peer.is_none() {
            return Err("client: --peer is needed".into());
        }
        if a.cc.is_some() == a.quinn_cc.is_some() {
            return Err("client: one of --cc SPEC or --quinn-cc NAME is needed".into());
        }
        if a.bytes == 0 {
            return Err("client: --bytes must be > 0".into());
        }
    }
    Ok(a)
}

/// CLOCK_MONOTONIC in ns: the clock the emulator and the other endpoint read.
fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn transport(mtu: u16) -> TransportConfig {
    let mut t = TransportConfig::default();
    t.initial_mtu(mtu)
        .min_mtu(mtu.min(1200))
        .mtu_discovery_config(None)
        .stream_receive_window(VarInt::from_u64(WINDOW).expect("fits"))
        .receive_window(VarInt::from_u64(WINDOW).expect("fits"))
        .send_window(WINDOW)
        .max_idle_timeout(Some(
            VarInt::from_u32(30_000).into(), // ms
        ));
    t
}

/// The client's controller factory, every controller wrapped in a [`Recorder`].
struct Recording {
    ours: Option<Arc<SlowstartFactory>>,
    quinn: Option<Arc<dyn ControllerFactory + Send + Sync>>,
    calls: Option<Sink<Call>>,
    trace: Sink<TraceRow>,
}

impl ControllerFactory for Recording {
    fn build(self: Arc<Self>, now: Instant, mtu: u16) -> Box<dyn Controller> {
        let (inner, trace) = match (&self.ours, &self.quinn) {
            // The adapter writes its own rows, with the core's phase.
            (Some(f), _) => (f.clone().build(now, mtu), None),
            (None, Some(f)) => (f.clone().build(now, mtu), Some(self.trace.clone())),
            (None, None) => unreachable!("one factory is given"),
        };
        Box::new(Recorder::new(inner, now, self.calls.clone(), trace))
    }
}

async fn server(a: &Args) -> Result<String, String> {
    let cert = rcgen::generate_simple_self_signed(vec!["slowstart".into()])
        .map_err(|e| format!("certificate: {e}"))?;
    std::fs::write(&a.cert, cert.cert.der()).map_err(|e| format!("{}: {e}", a.cert))?;
    let key = rustls::pki_types::PrivatePkcs8KeyDer::from(cert.key_pair.serialize_der());
    let mut config = ServerConfig::with_single_cert(vec![cert.cert.der().clone()], key.into())
        .map_err(|e| format!("server config: {e}"))?;
    config.transport_config(Arc::new(transport(a.mtu)));
    let endpoint = Endpoint::server(config, a.bind).map_err(|e| format!("bind {}: {e}", a.bind))?;
    println!("listening");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let incoming = endpoint.accept().await.ok_or("endpoint closed")?;
    let conn = incoming.await.map_err(|e| format!("handshake: {e}"))?;
    let accepted_ns = now_ns();
    let mut stream = conn
        .accept_uni()
        .await
        .map_err(|e| format!("stream: {e}"))?;
    let (mut bytes, mut first_byte_ns, mut last_byte_ns) = (0u64, None, None);
    // Unordered: each chunk is taken as it arrives. An ordered reader leaves every chunk after a
    // gap in quinn's reassembly buffer, and quinn-proto 0.11.19 aborts the connection once that
    // holds more than 1024 separate chunks (connection/assembler.rs MAX_CHUNKS, "too many gaps
    // in stream buffer"), which a slow-start overshoot on a long fat path reaches.
    while let Some(chunk) = stream
        .read_chunk(usize::MAX, false)
        .await
        .map_err(|e| format!("read: {e}"))?
    {
        let t = now_ns();
        first_byte_ns.get_or_insert(t);
        last_byte_ns = Some(t);
        bytes += chunk.bytes.len() as u64;
    }
    // The client closes once it sees every byte acknowledged; should its close be lost, this
    // end does not wait out the idle timeout.
    let _ = tokio::time::timeout(Duration::from_secs(2), conn.closed()).await;
    endpoint.close(0u32.into(), b"done");
    let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
    Ok(serde_json::json!({
        "bytes": bytes,
        "accepted_ns": accepted_ns,
        "first_byte_ns": first_byte_ns,
        "completed_ns": last_byte_ns,
    })
    .to_string())
}

async fn client(a: &Args) -> Result<String, String> {
    let der = std::fs::read(&a.cert).map_err(|e| format!("{}: {e}", a.cert))?;
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(der.into())
        .map_err(|e| format!("{}: {e}", a.cert))?;
    let trace = Sink::<TraceRow>::default();
    let calls = a.calls.as_ref().map(|_| Sink::<Call>::default());
    let factory = Recording {
        ours: a.cc.as_ref().map(|f| {
            Arc::new(
                f.clone()
                    .initial_window_packets(a.initcwnd)
                    .seed(a.seed)
                    .trace(trace.clone()),
            )
        }),
        quinn: a.quinn_cc.as_deref().map(|name| quinn_own(name, a)),
        calls: calls.clone(),
        trace: trace.clone(),
    };
    let mut t = transport(a.mtu);
    t.congestion_controller_factory(Arc::new(factory));
    let mut config =
        ClientConfig::with_root_certificates(Arc::new(roots)).map_err(|e| e.to_string())?;
    config.transport_config(Arc::new(t));
    let socket = std::net::UdpSocket::bind(a.bind).map_err(|e| format!("bind {}: {e}", a.bind))?;
    let endpoint = Endpoint::new(
        EndpointConfig::default(),
        None,
        socket,
        Arc::new(quinn::TokioRuntime),
    )
    .map_err(|e| format!("endpoint: {e}"))?;
    if let Some(at) = a.start_at {
        while now_ns() < at {
            std::thread::sleep(Duration::from_nanos((at - now_ns()).min(1_000_000)));
        }
    }
    let connect_ns = now_ns();
    let peer = a.peer.expect("checked");
    let conn = endpoint
        .connect_with(config, peer, "slowstart")
        .map_err(|e| format!("connect: {e}"))?
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    let start_ns = now_ns();
    let mut stream = conn.open_uni().await.map_err(|e| format!("stream: {e}"))?;
    let chunk = vec![0u8; 1 << 16];
    let mut left = a.bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        stream.write_all(&chunk[..n]).await.map_err(|e| match e {
            quinn::WriteError::ConnectionLost(e) => format!("connection: {e}"),
            e => format!("write: {e}"),
        })?;
        left -= n as u64;
    }
    stream.finish().map_err(|e| format!("finish: {e}"))?;
    // Done when the server has acknowledged every byte (quinn's `stopped` answers None then).
    match stream.stopped().await {
        Ok(None) => {}
        Ok(Some(code)) => return Err(format!("the server stopped the stream ({code})")),
        Err(quinn::StoppedError::ConnectionLost(e)) => return Err(format!("connection: {e}")),
        Err(e) => return Err(format!("stream: {e}")),
    }
    let end_ns = now_ns();
    let stats = conn.stats();
    conn.close(0u32.into(), b"done");
    // The close frame is sent; its draining period (3 PTO) need not be waited out in full.
    let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
    let rows = trace.take();
    let (table, recorder) = record(&rows);
    write_trace(a, &rows, &table)?;
    if let (Some(path), Some(calls)) = (&a.calls, &calls) {
        let text: String = calls.take().iter().map(|c| c.line() + "\n").collect();
        std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(serde_json::json!({
        "connect_ns": connect_ns,
        "start_ns": start_ns,
        "end_ns": end_ns,
        "sent_packets": stats.path.sent_packets,
        "lost_packets": stats.path.lost_packets,
        "lost_bytes": stats.path.lost_bytes,
        "congestion_calls": stats.path.congestion_events,
        "udp_tx_datagrams": stats.udp_tx.datagrams,
        "udp_tx_bytes": stats.udp_tx.bytes,
        "handshake_rtt_ns": stats.path.rtt.as_nanos() as u64,
        "max_cwnd_bytes": recorder.metrics().max_cwnd_bytes,
    })
    .to_string())
}

fn quinn_own(name: &str, a: &Args) -> Arc<dyn ControllerFactory + Send + Sync> {
    let window = a.initcwnd * a.mtu as u64;
    match name {
        "newreno" => {
            let mut c = NewRenoConfig::default();
            c.initial_window(window);
            Arc::new(c)
        }
        "cubic" => {
            let mut c = CubicConfig::default();
            c.initial_window(window);
            Arc::new(c)
        }
        _ => {
            let mut c = BbrConfig::default();
            c.initial_window(window);
            Arc::new(c)
        }
    }
}

/// The controller's rows as the simulator's flow trace (one flow: 0, every row), through the
/// recorder every driver measures a flow with.
fn record(rows: &[TraceRow]) -> (FlowTrace, FlowRecorder) {
    let mut recorder = FlowRecorder::new(0, 0);
    let (mut table, mut sampler) = (FlowTrace::default(), Sampler::unbounded(1));
    for r in rows {
        recorder.record_row(r.flow_row(0), &mut table, &mut sampler);
    }
    (table, recorder)
}

fn write_trace(a: &Args, rows: &[TraceRow], table: &FlowTrace) -> Result<(), String> {
    if let Some(path) = &a.qlog {
        let mut text = slowstart_quinn::trace::qlog_header();
        for (i, r) in rows.iter().enumerate() {
            text.push_str(&r.qlog(i.checked_sub(1).map(|p| &rows[p])));
        }
        std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))?;
    }
    let Some(path) = &a.trace else {
        return Ok(());
    };
    // Under the simulator's flow trace columns, as slowstart-udp writes its own.
    let mut text = Vec::new();
    let phase = |_: &str, code: usize| Phase::ALL.get(code).map(|p| p.name());
    write_csv(&mut text, &table.columns(), phase).expect("a Vec takes every write");
    std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))
}

/// Die with the parent named by $SLOWSTART_PARENT (as slowstart-udp does).
fn follow_parent() {
    if let Ok(parent) = std::env::var("SLOWSTART_PARENT") {
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
        if parent.parse::<libc::pid_t>().ok() != Some(unsafe { libc::getppid() }) {
            std::process::exit(1);
        }
    }
}

fn main() -> ExitCode {
    follow_parent();
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: runtime: {e}");
            return ExitCode::from(1);
        }
    };
    if args.role == "check" {
        return ExitCode::SUCCESS;
    }
    let limit = Duration::from_millis(args.duration_ms);
    let result = runtime.block_on(async {
        let run = async {
            if args.role == "server" {
                server(&args).await
            } else {
                client(&args).await
            }
        };
        match tokio::time::timeout(limit, run).await {
            Ok(r) => r,
            Err(_) => Err(format!(
                "not done within --duration-ms {}",
                args.duration_ms
            )),
        }
    });
    match result {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
