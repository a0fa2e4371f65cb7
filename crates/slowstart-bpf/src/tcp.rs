//! A connection's controller: the object's hooks called as Linux TCP calls them, on the
//! simulator's socket, and the kernel functions Linux offers a congestion controller.
//!
//! The calls follow net/ipv4/tcp_input.c (`tcp_ack`, `tcp_cong_control`,
//! `tcp_enter_recovery`, `tcp_end_cwnd_reduction`), tcp_output.c (`tcp_event_data_sent`),
//! tcp_timer.c/tcp_input.c (`tcp_enter_loss`) and tcp_cong.c (`tcp_set_ca_state`, the kfuncs).
//! Where the simulator's transport differs (it, not the controller, runs PRR; it reports an
//! ACK's events in its own order) docs/bpf.md says so.

use std::sync::Arc;

use slowstart_cc::external::MAX_CWND;
use slowstart_cc::external::{EcnEvent, Event, Guest, Outputs};
use slowstart_cc::{CommonParams, NegotiatedEcn, Phase};

use crate::layout::{ack, rate, sk};
use crate::object::{Object, POISON};
use crate::vm::{self, region, Access, Fault, Host, Memory, Region};

/// The hooks, by place in [`crate::object::HOOKS`].
const INIT: usize = 0;
const RELEASE: usize = 1;
const SSTHRESH: usize = 2;
const CONG_AVOID: usize = 3;
const SET_STATE: usize = 4;
const CWND_EVENT: usize = 5;
const IN_ACK_EVENT: usize = 6;
const PKTS_ACKED: usize = 7;
const CONG_CONTROL: usize = 9;

/// Linux's `TCP_INFINITE_SSTHRESH`.
const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// `enum tcp_ca_state` (include/uapi/linux/tcp.h).
const CA_OPEN: u32 = 0;
const CA_CWR: u32 = 2;
const CA_RECOVERY: u32 = 3;
const CA_LOSS: u32 = 4;

/// `enum tcp_ca_event` (include/net/tcp.h).
const EVENT_TX_START: u64 = 0;
const EVENT_COMPLETE_CWR: u64 = 2;
const EVENT_LOSS: u64 = 3;

/// `enum tcp_ca_ack_event_flags`.
const ACK_SLOWPATH: u64 = 1;
const ACK_WIN_UPDATE: u64 = 2;
const ACK_ECE: u64 = 4;

/// `tp->ecn_flags`: ECN was negotiated (TCP_ECN_OK).
const ECN_OK: u8 = 1;

/// `sk->sk_pacing_status`: the controller asks TCP to pace (SK_PACING_NEEDED).
const PACING_NEEDED: u32 = 1;

/// The kernel functions a controller may call (the kfuncs Linux registers for
/// BPF_PROG_TYPE_STRUCT_OPS in tcp_cong.c, `bpf_tcp_ca_kfunc_ids`), by the id calls carry.
pub const KFUNCS: &[(&str, i64)] = &[
    ("tcp_reno_ssthresh", 1),
    ("tcp_reno_cong_avoid", 2),
    ("tcp_reno_undo_cwnd", 3),
    ("tcp_slow_start", 4),
    ("tcp_cong_avoid_ai", 5),
];

pub fn kfunc_name(id: i64) -> &'static str {
    KFUNCS.iter().find(|k| k.1 == id).map_or("?", |k| k.0)
}

/// What the programs' calls reach: the clock and a seeded random stream.
struct Kernel {
    now: u64,
    rng: u64,
    /// The object, for its poisoned instructions' messages.
    object: Arc<Object>,
}

fn socket_at(addr: u64, what: &str) -> Result<(), Fault> {
    if addr == vm::pointer(region::SOCK, 0) {
        Ok(())
    } else {
        Err(Fault(format!(
            "passes {what} a pointer that is not the socket ({addr:#x})"
        )))
    }
}

#[inline]
fn get(mem: &Memory, off: u32) -> u32 {
    let b = &mem.regions[region::SOCK as usize].bytes[off as usize..];
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn set(mem: &mut Memory, off: u32, v: u32) {
    let b = &mut mem.regions[region::SOCK as usize].bytes;
    b[off as usize..off as usize + 4].copy_from_slice(&v.to_le_bytes());
}

fn set64(mem: &mut Memory, off: u32, v: u64) {
    let b = &mut mem.regions[region::SOCK as usize].bytes;
    b[off as usize..off as usize + 8].copy_from_slice(&v.to_le_bytes());
}

fn get64(mem: &Memory, off: u32) -> u64 {
    let b = &mem.regions[region::SOCK as usize].bytes;
    u64::from_le_bytes(
        b[off as usize..off as usize + 8]
            .try_into()
            .expect("8 bytes"),
    )
}

/// tcp_cong.c `tcp_slow_start`.
fn slow_start(mem: &mut Memory, acked: u32) -> u32 {
    let cwnd0 = get(mem, sk::SND_CWND);
    let cwnd = cwnd0.wrapping_add(acked).min(get(mem, sk::SND_SSTHRESH));
    let left = acked.wrapping_sub(cwnd.wrapping_sub(cwnd0));
    set(mem, sk::SND_CWND, cwnd.min(get(mem, sk::SND_CWND_CLAMP)));
    left
}

/// tcp_cong.c `tcp_cong_avoid_ai`.
fn cong_avoid_ai(mem: &mut Memory, w: u32, acked: u32) -> Result<(), Fault> {
    if w == 0 {
        return Err(Fault(
            "calls tcp_cong_avoid_ai with w = 0 (a division by zero in the kernel)".into(),
        ));
    }
    if get(mem, sk::SND_CWND_CNT) >= w {
        set(mem, sk::SND_CWND_CNT, 0);
        set(mem, sk::SND_CWND, get(mem, sk::SND_CWND).wrapping_add(1));
    }
    let cnt = get(mem, sk::SND_CWND_CNT).wrapping_add(acked);
    set(mem, sk::SND_CWND_CNT, cnt);
    if cnt >= w {
        let delta = cnt / w;
        set(mem, sk::SND_CWND_CNT, cnt - delta * w);
        set(
            mem,
            sk::SND_CWND,
            get(mem, sk::SND_CWND).wrapping_add(delta),
        );
    }
    let clamp = get(mem, sk::SND_CWND_CLAMP);
    set(mem, sk::SND_CWND, get(mem, sk::SND_CWND).min(clamp));
    Ok(())
}

fn in_slow_start(mem: &Memory) -> bool {
    get(mem, sk::SND_CWND) < get(mem, sk::SND_SSTHRESH)
}

/// include/net/tcp.h `tcp_is_cwnd_limited`.
fn is_cwnd_limited(mem: &Memory) -> bool {
    let flag = mem.regions[region::SOCK as usize].bytes[sk::IS_CWND_LIMITED as usize] & 1 == 1;
    flag || (in_slow_start(mem) && get(mem, sk::SND_CWND) < 2 * get(mem, sk::MAX_PACKETS_OUT))
}

impl Host for Kernel {
    fn helper(&mut self, id: i64, args: [u64; 5], mem: &mut Memory) -> Result<u64, Fault> {
        match id {
            5 => Ok(self.now),
            // jiffies at HZ = 1000.
            118 => Ok(self.now / 1_000_000),
            6 => Ok(0),
            7 => {
                // splitmix64, seeded by the flow's seed: the same stream on every run.
                self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = self.rng;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                Ok((z ^ (z >> 31)) as u32 as u64)
            }
            4 | 113 => {
                // bpf_probe_read_kernel(dst, size, src): a checked copy; a failed read zeroes
                // dst and returns -EFAULT, as the kernel's does.
                let (dst, size, src) = (args[0], args[1], args[2]);
                if size > 512 {
                    return Err(Fault(format!(
                        "reads {size} bytes with bpf_probe_read_kernel"
                    )));
                }
                let mut bytes = Vec::with_capacity(size as usize);
                let mut ok = true;
                for i in 0..size {
                    match mem.load(src.wrapping_add(i), 1, 0) {
                        Ok(b) => bytes.push(b as u8),
                        Err(_) => {
                            ok = false;
                            break;
                        }
                    }
                }
                for i in 0..size {
                    let b = if ok { bytes[i as usize] } else { 0 };
                    mem.store(dst.wrapping_add(i), 1, b as u64, 0)?;
                }
                Ok(if ok { 0 } else { (-14i64) as u64 })
            }
            id if id >= POISON => {
                let what = self
                    .object
                    .poisoned
                    .values()
                    .nth((id - POISON) as usize)
                    .cloned()
                    .unwrap_or_default();
                Err(Fault(what))
            }
            _ => Err(Fault(format!(
                "calls BPF helper {id}, which the simulator does not provide"
            ))),
        }
    }

    fn kfunc(&mut self, id: i64, args: [u64; 5], mem: &mut Memory) -> Result<u64, Fault> {
        let name = kfunc_name(id);
        socket_at(args[0], name)?;
        match id {
            // tcp_reno_ssthresh: half the window, at least two segments.
            1 => Ok((get(mem, sk::SND_CWND) >> 1).max(2) as u64),
            2 => {
                if !is_cwnd_limited(mem) {
                    return Ok(0);
                }
                let mut acked = args[2] as u32;
                if in_slow_start(mem) {
                    acked = slow_start(mem, acked);
                    if acked == 0 {
                        return Ok(0);
                    }
                }
                let w = get(mem, sk::SND_CWND);
                cong_avoid_ai(mem, w, acked)?;
                Ok(0)
            }
            3 => Ok(get(mem, sk::SND_CWND).max(get(mem, sk::PRIOR_CWND)) as u64),
            4 => Ok(slow_start(mem, args[1] as u32) as u64),
            5 => {
                cong_avoid_ai(mem, args[1] as u32, args[2] as u32)?;
                Ok(0)
            }
            _ => Err(Fault(format!(
                "calls kernel function {id}, which is not provided"
            ))),
        }
    }
}

/// One connection's controller.
pub struct Connection {
    obj: Arc<Object>,
    mem: Memory,
    kernel: Kernel,
    mss: u64,
    initialized: bool,
    ca_state: u32,
    /// Whether the initial slow start has ended (for the phase).
    left_initial: bool,
    /// Data CE-marked so far, bytes.
    ce_bytes: u64,
    /// An ECN flow calls `in_ack_event` with its feedback, before the ACK's other events.
    ecn_acks: bool,
}

fn region_of(name: &'static str, bytes: Vec<u8>, access: Access) -> Region {
    Region {
        bytes,
        name,
        access,
    }
}

impl Connection {
    pub fn new(obj: Arc<Object>, data: &[Vec<u8>], common: &CommonParams) -> Connection {
        let mut regions = vec![
            region_of("nothing", vec![], Access::ReadOnly),
            region_of(
                "the stack",
                vec![0; (vm::FRAME_STACK as usize) * vm::MAX_FRAMES],
                Access::ReadWrite,
            ),
            region_of("the hook's arguments", vec![0; 6 * 8], Access::ReadOnly),
            region_of(
                "the socket",
                vec![0; sk::TCP_SOCK_SIZE as usize],
                Access::Socket,
            ),
            region_of(
                "the hook's sample",
                vec![0; rate::SIZE as usize],
                Access::ReadOnly,
            ),
        ];
        for (section, bytes) in obj.data.iter().zip(data) {
            let access = if section.writable {
                Access::ReadWrite
            } else {
                Access::ReadOnly
            };
            regions.push(region_of(static_name(&section.name), bytes.clone(), access));
        }
        let mut mem = Memory { regions };
        set(&mut mem, sk::SND_CWND, common.initcwnd.max(1) as u32);
        set(&mut mem, sk::SND_SSTHRESH, INFINITE_SSTHRESH);
        set(&mut mem, sk::SND_CWND_CLAMP, u32::MAX);
        set(&mut mem, sk::MSS_CACHE, common.mss as u32);
        // TCP_ESTABLISHED; no pacing cap; TCP's default pacing shift (sock.h).
        mem.regions[region::SOCK as usize].bytes[sk::STATE as usize] = 1;
        set64(&mut mem, sk::MAX_PACING_RATE, u64::MAX);
        mem.regions[region::SOCK as usize].bytes[sk::PACING_SHIFT as usize] = 10;
        Connection {
            kernel: Kernel {
                now: 0,
                rng: common.seed ^ 0x5bd1_e995,
                object: obj.clone(),
            },
            obj,
            mem,
            mss: common.mss,
            initialized: false,
            ca_state: CA_OPEN,
            left_initial: false,
            ce_bytes: 0,
            ecn_acks: false,
        }
    }

    /// Call `hook` with `args` (after the socket), if the object has it: its `r0`.
    fn call(&mut self, hook: usize, args: &[u64]) -> Result<Option<u64>, String> {
        let Some(entry) = self.obj.entries[hook] else {
            return Ok(None);
        };
        let hook = crate::object::HOOKS[hook];
        let ctx = &mut self.mem.regions[region::CTX as usize].bytes;
        ctx[..8].copy_from_slice(&vm::pointer(region::SOCK, 0).to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            ctx[8 * (i + 1)..8 * (i + 2)].copy_from_slice(&a.to_le_bytes());
        }
        let r0 = vm::run(
            &self.obj.insns,
            entry.pc,
            vm::pointer(region::CTX, 0),
            &mut self.mem,
            &mut self.kernel,
        )
        .map_err(|f| format!("{hook}: {f}"))?;
        if get(&self.mem, sk::SND_CWND) == 0 {
            return Err(format!(
                "{hook}: left snd_cwnd at 0 (accepted: 1 or more segments)"
            ));
        }
        Ok(Some(r0))
    }

    /// include/net/tcp.h `tcp_set_ca_state`: the hook sees the old state.
    fn set_state(&mut self, state: u32) -> Result<(), String> {
        self.call(SET_STATE, &[state as u64])?;
        self.ca_state = state;
        let b = &mut self.mem.regions[region::SOCK as usize].bytes[sk::CA_STATE as usize];
        *b = (*b & !0x1f) | state as u8;
        Ok(())
    }

    fn ensure_init(&mut self) -> Result<(), String> {
        if !self.initialized {
            self.initialized = true;
            self.call(INIT, &[])?;
        }
        Ok(())
    }

    /// Transport state the object may read, before an ACK's hooks.
    fn refresh(&mut self, now: u64, delivered: u64, in_flight: u64) {
        let mss = self.mss.max(1);
        let m = &mut self.mem;
        set(m, sk::DELIVERED, delivered.div_ceil(mss) as u32);
        set(m, sk::DELIVERED_CE, self.ce_bytes.div_ceil(mss) as u32);
        // Sequence numbers in bytes from an initial sequence of 0.
        set(m, sk::SND_UNA, delivered as u32);
        set(m, sk::SND_NXT, (delivered + in_flight) as u32);
        set(m, sk::PACKETS_OUT, in_flight.div_ceil(mss) as u32);
        set64(m, sk::TCP_MSTAMP, now / 1000);
        set64(m, sk::BYTES_ACKED, delivered);
        self.kernel.now = now;
    }

    fn outputs(&self) -> Outputs {
        let m = &self.mem;
        let cwnd = (get(m, sk::SND_CWND) as u64 * self.mss).min(MAX_CWND);
        let ssthresh = match get(m, sk::SND_SSTHRESH) {
            s if s >= INFINITE_SSTHRESH => u64::MAX,
            s => s as u64 * self.mss,
        };
        let paced = get(m, sk::PACING_STATUS) == PACING_NEEDED;
        let rate = get64(m, sk::PACING_RATE);
        let phase = match self.ca_state {
            CA_RECOVERY | CA_CWR => Phase::Recovery,
            CA_LOSS => Phase::RtoRecovery,
            _ if cwnd < ssthresh && !self.left_initial => Phase::SlowStart,
            _ if cwnd < ssthresh => Phase::RtoRecovery,
            _ => Phase::CongestionAvoidance,
        };
        Outputs {
            cwnd,
            ssthresh,
            pacing_rate: (paced && rate > 0 && rate != u64::MAX).then_some(rate),
            send_quantum: None,
            phase,
        }
    }

    fn in_ack_event(&mut self, ece: bool) -> Result<(), String> {
        let flags = if ece {
            ACK_SLOWPATH | ACK_WIN_UPDATE | ACK_ECE
        } else {
            ACK_WIN_UPDATE
        };
        self.call(IN_ACK_EVENT, &[flags])?;
        Ok(())
    }

    fn handle(&mut self, event: Event<'_>) -> Result<(), String> {
        self.ensure_init()?;
        match event {
            Event::Sent(s) => {
                self.kernel.now = s.now;
                // tcp_event_data_sent: the first packet with nothing in flight.
                if s.bytes_in_flight <= s.bytes && !s.retransmission {
                    self.call(CWND_EVENT, &[EVENT_TX_START])?;
                }
            }
            Event::Ack(a) => {
                self.refresh(a.now, a.delivered, a.bytes_in_flight);
                let mss = self.mss.max(1);
                let before = (a.delivered - a.bytes_acked.min(a.delivered)).div_ceil(mss);
                let acked = (a.delivered.div_ceil(mss) - before) as u32;
                let m = &mut self.mem;
                set(m, sk::SRTT_US, (a.srtt / 1000 * 8) as u32);
                // minmax_get(&tp->rtt_min): the smallest sample, in s[0].
                set(m, sk::RTT_MIN, (a.now / 1000) as u32);
                set(m, sk::RTT_MIN + 4, (a.min_rtt / 1000) as u32);
                // The transport's answer to tcp_is_cwnd_limited, whichever way the object asks:
                // the flag, and (for Linux before 6.0, which tests it first in slow start) a
                // max_packets_out that gives the same answer.
                m.regions[region::SOCK as usize].bytes[sk::IS_CWND_LIMITED as usize] =
                    a.cwnd_limited as u8;
                let cwnd = get(m, sk::SND_CWND);
                set(
                    m,
                    sk::MAX_PACKETS_OUT,
                    if a.cwnd_limited { cwnd } else { 0 },
                );
                if let Some(r) = &a.rate {
                    set(m, sk::RATE_DELIVERED, r.delivered.div_ceil(mss) as u32);
                    set(m, sk::RATE_INTERVAL_US, (r.interval / 1000) as u32);
                    set(m, sk::APP_LIMITED, r.is_app_limited as u32);
                }
                // tcp_clean_rtx_queue: pkts_acked with the ACK's RTT sample (-1 without one).
                let rtt_us = a
                    .rtt
                    .map_or(-1i32, |r| (r / 1000).min(i32::MAX as u64) as i32);
                let in_flight = a.rate.map_or(0, |r| r.delivered) as u32;
                let sample = &mut m.regions[region::SAMPLE as usize].bytes;
                sample.fill(0);
                sample[ack::PKTS_ACKED as usize..][..4].copy_from_slice(&acked.to_le_bytes());
                sample[ack::RTT_US as usize..][..4].copy_from_slice(&rtt_us.to_le_bytes());
                sample[ack::IN_FLIGHT as usize..][..4].copy_from_slice(&in_flight.to_le_bytes());
                self.call(PKTS_ACKED, &[vm::pointer(region::SAMPLE, 0)])?;
                if !self.ecn_acks {
                    self.in_ack_event(false)?;
                }
                let ack_seq = a.delivered as u32 as u64;
                if self.obj.entries[CONG_CONTROL].is_some() {
                    self.fill_rate_sample(a);
                    let rs = vm::pointer(region::SAMPLE, 0);
                    let args = match self.obj.entries[CONG_CONTROL].map_or(4, |e| e.args) {
                        2 => vec![rs],
                        _ => vec![ack_seq, 0, rs],
                    };
                    self.call(CONG_CONTROL, &args)?;
                } else if !a.in_recovery
                    && !matches!(self.ca_state, CA_RECOVERY | CA_CWR)
                    && acked > 0
                {
                    // tcp_cong_avoid, on an ACK that delivered data outside a window reduction;
                    // the object tests tcp_is_cwnd_limited itself, as Linux's controllers do.
                    self.call(CONG_AVOID, &[ack_seq, acked as u64])?;
                }
                if get(&self.mem, sk::SND_CWND) >= get(&self.mem, sk::SND_SSTHRESH) {
                    self.left_initial = true;
                }
            }
            Event::Congestion(c) => {
                self.kernel.now = c.now;
                self.left_initial = true;
                let target = if c.ecn { CA_CWR } else { CA_RECOVERY };
                if self.ca_state < target {
                    // tcp_init_cwnd_reduction: ssthresh from the controller; the transport's
                    // PRR takes the window down to it (in CWR with `ecn_reduction = "prr"`).
                    let ss = self.new_ssthresh()?;
                    set(&mut self.mem, sk::SND_CWND_CNT, 0);
                    if self.obj.entries[CONG_CONTROL].is_none() {
                        set(&mut self.mem, sk::SND_CWND, ss.max(1));
                    }
                    self.set_state(target)?;
                }
            }
            Event::RecoveryExit { now } => {
                self.kernel.now = now;
                match self.ca_state {
                    CA_RECOVERY | CA_CWR => {
                        // tcp_end_cwnd_reduction.
                        let ss = get(&self.mem, sk::SND_SSTHRESH);
                        if self.obj.entries[CONG_CONTROL].is_none() && ss < INFINITE_SSTHRESH {
                            set(&mut self.mem, sk::SND_CWND, ss.max(1));
                        }
                        self.call(CWND_EVENT, &[EVENT_COMPLETE_CWR])?;
                        self.set_state(CA_OPEN)?;
                    }
                    CA_LOSS => self.set_state(CA_OPEN)?,
                    _ => {}
                }
            }
            Event::Rto { now, .. } => {
                self.kernel.now = now;
                self.left_initial = true;
                // tcp_enter_loss: a new episode asks the controller for ssthresh.
                if self.ca_state < CA_CWR {
                    self.new_ssthresh()?;
                    self.call(CWND_EVENT, &[EVENT_LOSS])?;
                }
                set(&mut self.mem, sk::SND_CWND, 1);
                set(&mut self.mem, sk::SND_CWND_CNT, 0);
                self.set_state(CA_LOSS)?;
            }
            Event::RttSample { .. } => {}
        }
        Ok(())
    }

    /// An episode's start: `prior_cwnd` kept (for undo), `ssthresh` asked of the controller.
    fn new_ssthresh(&mut self) -> Result<u32, String> {
        let cwnd = get(&self.mem, sk::SND_CWND);
        set(&mut self.mem, sk::PRIOR_CWND, cwnd);
        let ss = self.call(SSTHRESH, &[])?.unwrap_or(0) as u32;
        set(&mut self.mem, sk::SND_SSTHRESH, ss);
        Ok(ss)
    }

    /// `struct rate_sample` from the transport's delivery-rate sample (tcp_rate.c).
    fn fill_rate_sample(&mut self, a: &slowstart_cc::AckEvent) {
        let mss = self.mss.max(1);
        let s = &mut self.mem.regions[region::SAMPLE as usize].bytes;
        s.fill(0);
        let mut put = |off: u32, bytes: &[u8]| {
            s[off as usize..off as usize + bytes.len()].copy_from_slice(bytes);
        };
        match &a.rate {
            Some(r) => {
                put(
                    rate::PRIOR_DELIVERED,
                    &(r.prior_delivered.div_ceil(mss) as u32).to_le_bytes(),
                );
                put(
                    rate::DELIVERED,
                    &(r.delivered.div_ceil(mss) as i32).to_le_bytes(),
                );
                put(
                    rate::INTERVAL_US,
                    &((r.interval / 1000) as i64).to_le_bytes(),
                );
                put(rate::RTT_US, &((r.rtt / 1000) as i64).to_le_bytes());
                put(rate::IS_APP_LIMITED, &[r.is_app_limited as u8]);
            }
            None => {
                put(rate::DELIVERED, &(-1i32).to_le_bytes());
                put(rate::INTERVAL_US, &(-1i64).to_le_bytes());
                put(rate::RTT_US, &(-1i64).to_le_bytes());
            }
        }
        put(
            rate::ACKED_SACKED,
            &(a.bytes_acked.div_ceil(mss) as u32).to_le_bytes(),
        );
        put(
            rate::PRIOR_IN_FLIGHT,
            &(a.prior_in_flight.div_ceil(mss) as u32).to_le_bytes(),
        );
    }

    fn handle_ecn(&mut self, event: EcnEvent<'_>) -> Result<(), String> {
        match event {
            EcnEvent::Negotiated(ecn) => {
                if ecn != NegotiatedEcn::Off {
                    self.mem.regions[region::SOCK as usize].bytes[sk::ECN_FLAGS as usize] |= ECN_OK;
                    self.ecn_acks = true;
                }
                self.ensure_init()?;
            }
            EcnEvent::Feedback(fb) => {
                self.ensure_init()?;
                self.ce_bytes += fb.ce_bytes;

                self.refresh(fb.now, fb.delivered, fb.in_flight);
                // An ACK that reports marks carries ECE (RFC 3168 §6.1.3).
                self.in_ack_event(fb.ce_bytes > 0)?;
            }
        }
        Ok(())
    }

    pub fn release(&mut self) {
        if self.initialized {
            let _ = self.call(RELEASE, &[]);
        }
    }
}

fn static_name(name: &str) -> &'static str {
    match name {
        ".bss" => ".bss",
        ".data" => ".data",
        ".rodata" => ".rodata",
        n if n.starts_with(".rodata") => "a .rodata section",
        n if n.starts_with(".data") => "a .data section",
        _ => "a .bss section",
    }
}

impl Guest for Connection {
    fn call(&mut self, event: Event<'_>) -> Result<Outputs, String> {
        self.handle(event)?;
        Ok(self.outputs())
    }

    fn on_ecn(&mut self, event: EcnEvent<'_>) -> Option<Result<Outputs, String>> {
        Some(self.handle_ecn(event).map(|()| self.outputs()))
    }

    fn skipped(&self) -> u8 {
        let mut bits = Event::RttSample { now: 0, rtt: 0 }.bit();
        if self.obj.entries[CWND_EVENT].is_none() {
            bits |= Event::Sent(&Default::default()).bit();
        }
        bits
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.release();
    }
}

/// The initial outputs: the window Linux starts with (`tcp_init_cwnd`), before `init` runs.
pub fn initial_outputs(common: &CommonParams) -> Outputs {
    Outputs {
        cwnd: (common.initcwnd.max(1) * common.mss).min(MAX_CWND),
        ssthresh: u64::MAX,
        pacing_rate: None,
        send_quantum: None,
        phase: Phase::SlowStart,
    }
}
