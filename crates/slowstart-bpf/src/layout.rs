//! The simulator's own kernel structures: the socket a controller's hooks receive (`struct
//! sock` inside `inet_sock` inside `inet_connection_sock` inside `tcp_sock`, each at offset 0
//! as in Linux), `struct ack_sample` and `struct rate_sample`. Only the fields a congestion
//! controller reads or writes are here, at offsets of our choosing: an object's CO-RE
//! relocations are resolved against these by field name (as libbpf resolves them against the
//! running kernel's BTF, tools/lib/bpf/relo_core.c), so an object built against any kernel's
//! `vmlinux.h` runs. Field names and types follow Linux (include/linux/tcp.h, include/net/sock.h,
//! include/net/inet_connection_sock.h, include/net/tcp.h).

/// A field's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    U8,
    U16,
    U32,
    U64,
    I32,
    I64,
    /// A bitfield of this many bits, alone at bit 0 of its own byte.
    Bits(u8),
    Struct(&'static str),
    Array(&'static Ty, u32),
}

impl Ty {
    pub fn size(self) -> u32 {
        match self {
            Ty::U8 | Ty::Bits(_) => 1,
            Ty::U16 => 2,
            Ty::U32 | Ty::I32 => 4,
            Ty::U64 | Ty::I64 => 8,
            Ty::Struct(name) => def(name).map_or(0, |d| d.size),
            Ty::Array(elem, len) => elem.size() * len,
        }
    }

    pub fn signed(self) -> bool {
        matches!(self, Ty::I32 | Ty::I64)
    }
}

#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    pub offset: u32,
    pub ty: Ty,
    /// The kernel's verifier lets a congestion controller write it
    /// (net/ipv4/bpf_tcp_ca.c, `bpf_tcp_ca_btf_struct_access`).
    pub writable: bool,
}

#[derive(Debug)]
pub struct StructDef {
    pub name: &'static str,
    pub size: u32,
    pub fields: &'static [Field],
}

const fn f(name: &'static str, offset: u32, ty: Ty) -> Field {
    Field {
        name,
        offset,
        ty,
        writable: false,
    }
}

const fn w(name: &'static str, offset: u32, ty: Ty) -> Field {
    Field {
        name,
        offset,
        ty,
        writable: true,
    }
}

/// Offsets in the socket, from its start (`struct sock *sk` and `struct tcp_sock *tp` are the
/// same address).
pub mod sk {
    pub const STATE: u32 = 0;
    pub const PACING_RATE: u32 = 16;
    pub const MAX_PACING_RATE: u32 = 24;
    pub const PACING_STATUS: u32 = 32;
    pub const PACING_SHIFT: u32 = 36;
    /// 0: the simulator sends no GSO bursts (tcp_cubic.c `hystart_ack_delay` is then 0, as the
    /// built-in HyStart takes it).
    pub const GSO_MAX_SIZE: u32 = 44;
    pub const SOCK_SIZE: u32 = 64;
    pub const CA_STATE: u32 = 64;
    /// `icsk_ca_priv`: ICSK_CA_PRIV_SIZE (104 bytes, include/net/inet_connection_sock.h).
    pub const CA_PRIV: u32 = 72;
    pub const CA_PRIV_SIZE: u32 = 104;
    pub const ICSK_SIZE: u32 = 176;
    pub const SND_CWND: u32 = 176;
    pub const SND_SSTHRESH: u32 = 180;
    pub const SND_CWND_CNT: u32 = 184;
    pub const SND_CWND_CLAMP: u32 = 188;
    pub const SND_CWND_STAMP: u32 = 196;
    pub const PRIOR_CWND: u32 = 200;
    pub const SRTT_US: u32 = 208;
    pub const PACKETS_OUT: u32 = 224;
    pub const SACKED_OUT: u32 = 228;
    pub const LOST_OUT: u32 = 232;
    pub const RETRANS_OUT: u32 = 236;
    pub const DELIVERED: u32 = 240;
    pub const DELIVERED_CE: u32 = 244;
    pub const APP_LIMITED: u32 = 252;
    pub const MSS_CACHE: u32 = 256;
    pub const SND_UNA: u32 = 268;
    pub const SND_NXT: u32 = 272;
    /// The sender receives no data in the simulator: constant, as a bulk sender's is.
    pub const RCV_NXT: u32 = 276;
    pub const MAX_PACKETS_OUT: u32 = 280;
    pub const RATE_DELIVERED: u32 = 300;
    pub const RATE_INTERVAL_US: u32 = 304;
    pub const ECN_FLAGS: u32 = 308;
    pub const IS_CWND_LIMITED: u32 = 309;
    pub const TCP_MSTAMP: u32 = 312;
    pub const BYTES_ACKED: u32 = 320;
    /// `struct minmax rtt_min`: three (t, v) samples, the minimum in `s[0].v`.
    pub const RTT_MIN: u32 = 344;
    pub const TCP_SOCK_SIZE: u32 = 368;
}

/// Offsets in `struct ack_sample` (include/net/tcp.h).
pub mod ack {
    pub const PKTS_ACKED: u32 = 0;
    pub const RTT_US: u32 = 4;
    pub const IN_FLIGHT: u32 = 8;
    pub const SIZE: u32 = 12;
}

/// Offsets in `struct rate_sample` (include/net/tcp.h).
pub mod rate {
    pub const PRIOR_MSTAMP: u32 = 0;
    pub const PRIOR_DELIVERED: u32 = 8;
    pub const PRIOR_DELIVERED_CE: u32 = 12;
    pub const DELIVERED: u32 = 16;
    pub const DELIVERED_CE: u32 = 20;
    pub const INTERVAL_US: u32 = 24;
    pub const SND_INTERVAL_US: u32 = 32;
    pub const RCV_INTERVAL_US: u32 = 36;
    pub const RTT_US: u32 = 40;
    pub const LOSSES: u32 = 48;
    pub const ACKED_SACKED: u32 = 52;
    pub const PRIOR_IN_FLIGHT: u32 = 56;
    pub const LAST_END_SEQ: u32 = 60;
    pub const IS_APP_LIMITED: u32 = 64;
    pub const IS_RETRANS: u32 = 65;
    pub const IS_ACK_DELAYED: u32 = 66;
    pub const SIZE: u32 = 72;
}

use sk::*;

static STRUCTS: &[StructDef] = &[
    StructDef {
        name: "sock_common",
        size: 16,
        fields: &[f("skc_state", STATE, Ty::U8)],
    },
    StructDef {
        name: "sock",
        size: SOCK_SIZE,
        fields: &[
            f("__sk_common", 0, Ty::Struct("sock_common")),
            w("sk_pacing_rate", PACING_RATE, Ty::U64),
            f("sk_max_pacing_rate", MAX_PACING_RATE, Ty::U64),
            w("sk_pacing_status", PACING_STATUS, Ty::U32),
            f("sk_pacing_shift", PACING_SHIFT, Ty::U8),
            f("sk_gso_max_size", GSO_MAX_SIZE, Ty::U32),
        ],
    },
    StructDef {
        name: "inet_sock",
        size: SOCK_SIZE,
        fields: &[f("sk", 0, Ty::Struct("sock"))],
    },
    StructDef {
        name: "inet_connection_sock",
        size: ICSK_SIZE,
        fields: &[
            f("icsk_inet", 0, Ty::Struct("inet_sock")),
            f("icsk_ca_state", CA_STATE, Ty::Bits(5)),
            w(
                "icsk_ca_priv",
                CA_PRIV,
                Ty::Array(&Ty::U64, CA_PRIV_SIZE / 8),
            ),
        ],
    },
    StructDef {
        name: "minmax_sample",
        size: 8,
        fields: &[f("t", 0, Ty::U32), f("v", 4, Ty::U32)],
    },
    StructDef {
        name: "minmax",
        size: 24,
        fields: &[f("s", 0, Ty::Array(&Ty::Struct("minmax_sample"), 3))],
    },
    StructDef {
        name: "tcp_sock",
        size: TCP_SOCK_SIZE,
        fields: &[
            f("inet_conn", 0, Ty::Struct("inet_connection_sock")),
            w("snd_cwnd", SND_CWND, Ty::U32),
            w("snd_ssthresh", SND_SSTHRESH, Ty::U32),
            w("snd_cwnd_cnt", SND_CWND_CNT, Ty::U32),
            f("snd_cwnd_clamp", SND_CWND_CLAMP, Ty::U32),
            w("snd_cwnd_stamp", SND_CWND_STAMP, Ty::U32),
            f("prior_cwnd", PRIOR_CWND, Ty::U32),
            f("srtt_us", SRTT_US, Ty::U32),
            f("packets_out", PACKETS_OUT, Ty::U32),
            f("sacked_out", SACKED_OUT, Ty::U32),
            f("lost_out", LOST_OUT, Ty::U32),
            f("retrans_out", RETRANS_OUT, Ty::U32),
            f("delivered", DELIVERED, Ty::U32),
            f("delivered_ce", DELIVERED_CE, Ty::U32),
            w("app_limited", APP_LIMITED, Ty::U32),
            f("mss_cache", MSS_CACHE, Ty::U32),
            f("snd_una", SND_UNA, Ty::U32),
            f("snd_nxt", SND_NXT, Ty::U32),
            f("rcv_nxt", RCV_NXT, Ty::U32),
            f("max_packets_out", MAX_PACKETS_OUT, Ty::U32),
            f("rate_delivered", RATE_DELIVERED, Ty::U32),
            f("rate_interval_us", RATE_INTERVAL_US, Ty::U32),
            w("ecn_flags", ECN_FLAGS, Ty::U8),
            f("is_cwnd_limited", IS_CWND_LIMITED, Ty::Bits(1)),
            f("tcp_mstamp", TCP_MSTAMP, Ty::U64),
            f("bytes_acked", BYTES_ACKED, Ty::U64),
            f("rtt_min", RTT_MIN, Ty::Struct("minmax")),
        ],
    },
    StructDef {
        name: "ack_sample",
        size: ack::SIZE,
        fields: &[
            f("pkts_acked", ack::PKTS_ACKED, Ty::U32),
            f("rtt_us", ack::RTT_US, Ty::I32),
            f("in_flight", ack::IN_FLIGHT, Ty::U32),
        ],
    },
    StructDef {
        name: "rate_sample",
        size: rate::SIZE,
        fields: &[
            f("prior_mstamp", rate::PRIOR_MSTAMP, Ty::U64),
            f("prior_delivered", rate::PRIOR_DELIVERED, Ty::U32),
            f("prior_delivered_ce", rate::PRIOR_DELIVERED_CE, Ty::U32),
            f("delivered", rate::DELIVERED, Ty::I32),
            f("delivered_ce", rate::DELIVERED_CE, Ty::I32),
            f("interval_us", rate::INTERVAL_US, Ty::I64),
            f("snd_interval_us", rate::SND_INTERVAL_US, Ty::U32),
            f("rcv_interval_us", rate::RCV_INTERVAL_US, Ty::U32),
            f("rtt_us", rate::RTT_US, Ty::I64),
            f("losses", rate::LOSSES, Ty::I32),
            f("acked_sacked", rate::ACKED_SACKED, Ty::U32),
            f("prior_in_flight", rate::PRIOR_IN_FLIGHT, Ty::U32),
            f("last_end_seq", rate::LAST_END_SEQ, Ty::U32),
            f("is_app_limited", rate::IS_APP_LIMITED, Ty::U8),
            f("is_retrans", rate::IS_RETRANS, Ty::U8),
            f("is_ack_delayed", rate::IS_ACK_DELAYED, Ty::U8),
        ],
    },
];

/// The structure named `name`.
pub fn def(name: &str) -> Option<&'static StructDef> {
    STRUCTS.iter().find(|d| d.name == name)
}

/// The structures the socket nests, innermost first: a pointer to any of them is the socket.
pub const SOCKET_TYPES: [&str; 5] = [
    "sock_common",
    "sock",
    "inet_sock",
    "inet_connection_sock",
    "tcp_sock",
];

/// Whether `len` bytes at `offset` of the socket lie in one field the kernel lets a
/// controller write (`bpf_tcp_ca_btf_struct_access`).
#[inline]
pub fn writable(offset: u32, len: u32) -> bool {
    let owners = writable_owners();
    let (start, end) = (offset as usize, offset as usize + len as usize);
    match owners.get(start..end) {
        Some([first, rest @ ..]) => *first != 0 && rest.iter().all(|o| o == first),
        _ => false,
    }
}

/// For each byte of the socket, which writable field holds it (1 + its index among the
/// socket's fields, nested ones included), or 0: computed once.
fn writable_owners() -> &'static [u16] {
    static OWNERS: std::sync::OnceLock<Vec<u16>> = std::sync::OnceLock::new();
    OWNERS.get_or_init(|| {
        let mut owners = vec![0u16; sk::TCP_SOCK_SIZE as usize];
        let mut next = 0u16;
        fn walk(structure: &StructDef, base: u32, owners: &mut [u16], next: &mut u16) {
            for field in structure.fields {
                let start = base + field.offset;
                match field.ty {
                    Ty::Struct(inner) => {
                        if let Some(d) = def(inner) {
                            walk(d, start, owners, next);
                        }
                    }
                    _ if field.writable => {
                        *next += 1;
                        let end = (start + field.ty.size()) as usize;
                        owners[start as usize..end].fill(*next);
                    }
                    _ => {}
                }
            }
        }
        if let Some(d) = def("tcp_sock") {
            walk(d, 0, &mut owners, &mut next);
        }
        owners
    })
}

/// The socket's writable fields, as the kernel's verifier names them, for error messages.
pub fn writable_names() -> Vec<&'static str> {
    STRUCTS
        .iter()
        .flat_map(|d| d.fields.iter())
        .filter(|f| f.writable)
        .map(|f| f.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No two fields of a structure overlap, and each fits inside it.
    #[test]
    fn fields_are_disjoint_and_inside_their_structure() {
        for d in STRUCTS {
            let mut spans: Vec<(u32, u32, &str)> = d
                .fields
                .iter()
                .map(|f| (f.offset, f.offset + f.ty.size(), f.name))
                .collect();
            spans.sort();
            for pair in spans.windows(2) {
                assert!(pair[0].1 <= pair[1].0, "{}: {pair:?}", d.name);
            }
            let last = spans.last().expect("a field");
            assert!(last.1 <= d.size, "{}: {last:?} past {}", d.name, d.size);
        }
    }

    #[test]
    fn only_the_verifiers_fields_are_writable() {
        assert!(writable(sk::SND_CWND, 4));
        assert!(writable(sk::CA_PRIV + 96, 8));
        assert!(!writable(sk::CA_PRIV + 100, 8), "past icsk_ca_priv");
        assert!(!writable(sk::SRTT_US, 4));
        assert!(
            !writable(sk::SND_CWND, 8),
            "snd_cwnd and snd_ssthresh are, but not across"
        );
        assert!(writable(sk::PACING_RATE, 8));
    }
}
