//! `slowstart-udp send --bind ADDR --peer ADDR --flow FLOW.json [--id N] [--seed N]
//!  [--duration-ms N] [--start-at NS] [--trace TRACE.csv]`
//! `slowstart-udp recv --bind ADDR --flow FLOW.json [--id N] [--duration-ms N]`
//! `slowstart-udp server --bind ADDR --peer ADDR --flow FLOW.json [--id N] [--seed N]
//!  [--duration-ms N] [--start-at NS] [--path-bps N --path-rtt-ns N] [--trace TRACE.csv]`
//! `slowstart-udp client --bind ADDR --peer ADDR --flow FLOW.json [--id N] [--duration-ms N]
//!  [--start-at NS]`
//!
//! One endpoint of one flow over UDP, on the simulator's own transport and controller. FLOW.json
//! is one `[[flow]]` of the canonical config (what `slowstart.load` produces). A bulk flow runs
//! as `send` and `recv`, a web flow as `server` (the data sender) and `client` (which opens
//! each connection with its request; see slowstart_udp::web). The receiver and the server
//! print `listening` once bound; the sender and the client start at CLOCK_MONOTONIC
//! `--start-at` (ns) if given (the server counts its trace times from it); `--path-bps` and
//! `--path-rtt-ns` give the server the path's BDP, below which a round trip waiting on a window
//! counts as a stall, as in the simulation; `--seed` is the scenario's seed (the controller's
//! derives from it as the simulator's does). On success the endpoint prints its report as one
//! JSON line on stdout and exits 0; on failure one `error: ` line on stderr and exit 1, 2 for
//! bad input (arguments, a flow it cannot run, a user's controller that faulted). The sender's
//! `--trace` writes its state at every ACK as CSV, under the simulator's flow trace columns
//! (t_ns since the start, flow, cwnd_bytes, ..., phase by name). With $SLOWSTART_PARENT set, the endpoint dies
//! with that process (PR_SET_PDEATHSIG), so a killed caller leaves none behind.
//!
//! The `slowstart-udp` binary is [`main`]; so is `slowstart._core.udp_endpoint`, which runs it
//! in a Python process that has registered the flow's Python controller first
//! (`python -m slowstart.udp_endpoint`): a Python controller runs only there.

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};

use slowstart_cc::external;
use slowstart_cc::{Controller, Phase};
use slowstart_config::trace::{write_csv, FlowTrace};
use slowstart_config::{stall_threshold, substream_seed, FlowConfig, SeedStream};

use crate::clock::now_ns;
use crate::{run_client, run_receiver, run_sender, run_server, Limits, ServerOptions};

const ROLES: [&str; 4] = ["send", "recv", "server", "client"];

/// The roles that run the flow's controller (the data senders).
const CONTROLLING: [&str; 2] = ["send", "server"];

struct Args {
    role: String,
    bind: SocketAddr,
    peer: Option<SocketAddr>,
    flow: FlowConfig,
    id: u32,
    seed: u64,
    duration_ms: Option<u64>,
    start_at: Option<u64>,
    path_bps: Option<u64>,
    path_rtt_ns: Option<u64>,
    trace: Option<String>,
}

impl Args {
    /// The controller's seed, derived from the scenario's as in the simulation.
    fn controller_seed(&self) -> u64 {
        substream_seed(self.seed, SeedStream::Controller, self.id as u64)
    }
}

fn parse(args: Vec<String>) -> Result<Args, String> {
    let mut it = args.into_iter();
    let role = it
        .next()
        .ok_or("expected a role: send, recv, server or client")?;
    if !ROLES.contains(&role.as_str()) {
        return Err(format!(
            "role: expected send, recv, server or client, got {role:?}"
        ));
    }
    let (mut bind, mut peer, mut flow, mut id, mut seed) = (None, None, None, 0, 0);
    let (mut duration_ms, mut start_at, mut trace) = (None, None, None);
    let (mut path_bps, mut path_rtt_ns) = (None, None);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag}: expected a value"))?;
        let addr = |v: &str| v.parse::<SocketAddr>().map_err(|e| format!("{flag}: {e}"));
        let int = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--bind" => bind = Some(addr(&value)?),
            "--peer" => peer = Some(addr(&value)?),
            "--flow" => {
                let text = std::fs::read_to_string(&value).map_err(|e| format!("{value}: {e}"))?;
                let f: FlowConfig =
                    serde_json::from_str(&text).map_err(|e| format!("{value}: {e}"))?;
                flow = Some(f);
            }
            "--id" => id = int(&value)? as u32,
            "--seed" => seed = int(&value)?,
            "--duration-ms" => duration_ms = Some(int(&value)?),
            "--start-at" => start_at = Some(int(&value)?),
            "--path-bps" => path_bps = Some(int(&value)?),
            "--path-rtt-ns" => path_rtt_ns = Some(int(&value)?),
            "--trace" => trace = Some(value),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if role != "recv" && peer.is_none() {
        return Err(format!("{role}: --peer is needed"));
    }
    if path_bps.is_some() != path_rtt_ns.is_some() {
        return Err("--path-bps and --path-rtt-ns go together".into());
    }
    let args = Args {
        role,
        bind: bind.ok_or("--bind is needed")?,
        peer,
        flow: flow.ok_or("--flow is needed")?,
        id,
        seed,
        duration_ms,
        start_at,
        path_bps,
        path_rtt_ns,
        trace,
    };
    if CONTROLLING.contains(&args.role.as_str()) && args.flow.cc.is_guest() {
        load_guest(&args.flow.cc)?;
        // A constructor that fails is bad input, named before the socket opens.
        let common = args.flow.common_params(args.controller_seed());
        Controller::new(&args.flow.cc, &common).map_err(|e| e.0)?;
    }
    Ok(args)
}

fn run(a: &Args) -> Result<String, String> {
    let sock = UdpSocket::bind(a.bind).map_err(|e| format!("bind {}: {e}", a.bind))?;
    let mut limits = Limits::default();
    if let Some(ms) = a.duration_ms {
        limits.duration_ns = ms.saturating_mul(1_000_000);
    }
    if a.role == "recv" {
        println!("listening");
        std::io::stdout().flush().map_err(|e| e.to_string())?;
        let r = run_receiver(&sock, &a.flow, a.id, &limits)?;
        return serde_json::to_string(&r).map_err(|e| e.to_string());
    }
    let peer = a.peer.expect("checked");
    let seed = a.controller_seed();
    if a.role == "server" {
        println!("listening");
        std::io::stdout().flush().map_err(|e| e.to_string())?;
        let opts = ServerOptions {
            seed,
            origin: a.start_at,
            stall_threshold: a
                .path_bps
                .zip(a.path_rtt_ns)
                .map(|(bps, rtt)| stall_threshold(bps, rtt, a.flow.mss, a.flow.header_bytes)),
        };
        let r = run_server(&sock, peer, &a.flow, a.id, &opts, &limits)?;
        write_trace(a, &r.trace)?;
        return serde_json::to_string(&r).map_err(|e| e.to_string());
    }
    if let Some(at) = a.start_at {
        while now_ns() < at {
            std::thread::sleep(std::time::Duration::from_nanos(
                (at - now_ns()).min(1_000_000),
            ));
        }
    }
    if a.role == "client" {
        let r = run_client(&sock, peer, &a.flow, a.id, &limits)?;
        return serde_json::to_string(&r).map_err(|e| e.to_string());
    }
    let r = run_sender(&sock, peer, &a.flow, a.id, seed, &limits)?;
    write_trace(a, &r.trace)?;
    serde_json::to_string(&r).map_err(|e| e.to_string())
}

/// `--trace`: the sender's state at every ACK as CSV, under the simulator's flow trace
/// columns (`slowstart_config::trace::FlowTrace`), phases by name.
fn write_trace(a: &Args, trace: &FlowTrace) -> Result<(), String> {
    if let Some(path) = &a.trace {
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?,
        );
        let phase = |_: &str, code: usize| Phase::ALL.get(code).map(|p| p.name());
        write_csv(&mut f, &trace.columns(), phase)
            .and_then(|()| f.flush())
            .map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}

/// Die with the parent named by $SLOWSTART_PARENT (a parent gone before the signal was armed
/// shows as a different parent pid).
fn follow_parent() {
    if let Ok(parent) = std::env::var("SLOWSTART_PARENT") {
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
        if parent.parse::<libc::pid_t>().ok() != Some(unsafe { libc::getppid() }) {
            std::process::exit(1);
        }
    }
}

/// A user's controller: a WebAssembly one registered from the file the loader found it in, if
/// the file still holds what it hashed; a Python one must have been registered by the Python
/// process this runs in (`python -m slowstart.udp_endpoint`).
fn load_guest(cc: &slowstart_cc::CcSpec) -> Result<(), String> {
    let Some(guest) = &cc.guest else {
        return Ok(());
    };
    if guest.kind != "wasm" && guest.kind != "bpf" {
        if external::is_registered(&cc.name) {
            return Ok(());
        }
        return Err(format!(
            "cc {}: a Python controller runs in the endpoint slowstart starts for it \
             (python -m slowstart.udp_endpoint), not in this binary",
            cc.name
        ));
    }
    let module =
        std::fs::read(&guest.path).map_err(|e| format!("cc {}: {}: {e}", cc.name, guest.path))?;
    if slowstart_wasm::sha256_hex(&module) != guest.sha256 {
        return Err(format!(
            "cc {}: {} has changed since the run was configured",
            cc.name, guest.path
        ));
    }
    let registered = if guest.kind == "bpf" {
        slowstart_bpf::register(&cc.name, &module)
    } else {
        slowstart_wasm::register(&cc.name, &module)
    };
    registered.map_err(|e| format!("cc {}: {e}", cc.name))
}

/// Run one endpoint with `args` (the words after the program's name); its exit status: 0 after
/// the report, 1 after a failure, 2 for bad input, each with one `error: ` line on stderr. A
/// user's controller that faults ends the run with the line the simulator gives
/// (`slowstart_cc::external`), its time counted from the flow's start.
pub fn main(args: Vec<String>) -> u8 {
    follow_parent();
    let args = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            0
        }
        Err(e) => match external::take_fault() {
            Some(fault) => {
                eprintln!("error: {fault}");
                2
            }
            None => {
                eprintln!("error: {e}");
                1
            }
        },
    }
}
