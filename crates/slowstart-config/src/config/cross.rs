//! A `[[cross]]` source: traffic without congestion control beside the flows.

use super::*;

/// A source of traffic without congestion control (UDP): from `src` to `dst` it sends
/// `packet_bytes`-byte packets at `rate_bps` from `start_ns` until `stop_ns`, entering the links
/// as the flows' packets do; drops do not slow it. `onoff` alternates on and off periods, as
/// ns-2's Application/Traffic/Exponential does, sending at the rate only while on. Names in
/// error messages are the scenario's (`cross.N.rate`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossConfig {
    /// "cbr" (constant bit rate) or "onoff".
    #[serde(default = "cross_kind")]
    pub kind: String,
    #[serde(default = "cross_src")]
    pub src: String,
    #[serde(default = "cross_dst")]
    pub dst: String,
    /// Rate while sending, counting every byte of the packet (required).
    #[serde(default)]
    pub rate_bps: Option<u64>,
    /// Bytes on the wire per packet, IP and UDP headers included.
    #[serde(default = "cross_packet_bytes")]
    pub packet_bytes: u64,
    #[serde(default)]
    pub start_ns: u64,
    /// When it stops sending; `None`: at the end of the run.
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// `onoff` only: (mean) length of an on and of an off period; see [`CROSS_ON_NS`].
    #[serde(default)]
    pub on_ns: Option<u64>,
    #[serde(default)]
    pub off_ns: Option<u64>,
    /// `onoff` only: "exponential" (the default) or "fixed" period lengths.
    #[serde(default)]
    pub distribution: Option<String>,
}

/// ns-2's defaults for Application/Traffic/Exponential (tcl/lib/ns-default.tcl: burst_time_
/// and idle_time_ 0.5 s); exponential periods as there, since a sum of such sources gives the
/// Poisson-like burst arrivals background traffic is usually modelled with; "fixed" repeats
/// exactly, for a periodic burst.
pub const CROSS_ON_NS: u64 = 500_000_000;
pub const CROSS_OFF_NS: u64 = 500_000_000;
pub const CROSS_DISTRIBUTIONS: [&str; 2] = ["exponential", "fixed"];
pub const CROSS_KINDS: [&str; 2] = ["cbr", "onoff"];
/// Smallest and largest cross packet: IPv4 and UDP headers alone (RFC 791, RFC 768: 20 + 8
/// bytes) and IPv4's largest datagram (its 16-bit total length).
pub const MIN_CROSS_PACKET_BYTES: u64 = 28;
pub const MAX_CROSS_PACKET_BYTES: u64 = 65_535;

fn cross_kind() -> String {
    "cbr".into()
}
fn cross_src() -> String {
    "sender".into()
}
fn cross_dst() -> String {
    "receiver".into()
}
/// One full Ethernet-MTU IP packet.
fn cross_packet_bytes() -> u64 {
    1500
}

impl CrossConfig {
    pub fn is_onoff(&self) -> bool {
        self.kind == "onoff"
    }

    /// (on, off, exponential) of an `onoff` source, defaults applied.
    pub fn periods(&self) -> (u64, u64, bool) {
        (
            self.on_ns.unwrap_or(CROSS_ON_NS),
            self.off_ns.unwrap_or(CROSS_OFF_NS),
            self.distribution.as_deref().unwrap_or("exponential") == "exponential",
        )
    }

    /// `nodes` (and the set of them, `known`) to check `src` and `dst` against; `duration_ns`
    /// bounds the start.
    pub fn validate(
        &self,
        i: usize,
        nodes: &[String],
        known: &std::collections::HashSet<&str>,
        duration_ns: u64,
    ) -> Result<(), SimError> {
        let at = format!("cross.{i}");
        if !CROSS_KINDS.contains(&self.kind.as_str()) {
            return Err(err(format!(
                "{at}.kind: expected one of {}, got \"{}\"",
                CROSS_KINDS.join(", "),
                self.kind
            )));
        }
        for (end, name) in [("src", &self.src), ("dst", &self.dst)] {
            if !known.contains(name.as_str()) {
                return Err(err(format!(
                    "{at}.{end}: unknown node '{name}' (nodes: {})",
                    node_list(nodes)
                )));
            }
        }
        if self.src == self.dst {
            return Err(err(format!("{at}: src and dst must differ")));
        }
        let Some(rate) = self.rate_bps else {
            return Err(err(format!(
                "{at}.rate: missing (a rate in 1..={MAX_RATE_BPS} bits/s, e.g. \"100Mbps\")"
            )));
        };
        in_range(&format!("{at}.rate"), rate, 1, MAX_RATE_BPS)?;
        in_range(
            &format!("{at}.packet_size"),
            self.packet_bytes,
            MIN_CROSS_PACKET_BYTES,
            MAX_CROSS_PACKET_BYTES,
        )?;
        in_range(
            &format!("{at}.start"),
            self.start_ns,
            0,
            duration_ns.saturating_sub(1),
        )?;
        if let Some(stop) = self.stop_ns {
            in_range(
                &format!("{at}.stop"),
                stop,
                self.start_ns + 1,
                MAX_DURATION_NS,
            )?;
        }
        if self.is_onoff() {
            in_range(
                &format!("{at}.on"),
                self.on_ns.unwrap_or(CROSS_ON_NS),
                1,
                MAX_DELAY_NS,
            )?;
            in_range(
                &format!("{at}.off"),
                self.off_ns.unwrap_or(CROSS_OFF_NS),
                0,
                MAX_DELAY_NS,
            )?;
            if let Some(d) = &self.distribution {
                if !CROSS_DISTRIBUTIONS.contains(&d.as_str()) {
                    return Err(err(format!(
                        "{at}.distribution: expected one of {}, got \"{d}\"",
                        CROSS_DISTRIBUTIONS.join(", ")
                    )));
                }
            }
        } else {
            for (key, given) in [
                ("on", self.on_ns.is_some()),
                ("off", self.off_ns.is_some()),
                ("distribution", self.distribution.is_some()),
            ] {
                if given {
                    return Err(err(format!(
                        "{at}.{key}: only for kind = \"onoff\" (this source is \"{}\")",
                        self.kind
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Most packets the cross sources of a run may send, all together, estimated before it (rate x
/// sending time / packet size, summed): about a microsecond of engine time each, so some 15
/// minutes at most.
pub const MAX_CROSS_PACKETS: u64 = 1_000_000_000;

impl SimConfig {
    /// A source no faster than the fastest link out of its node can take (else the excess is
    /// only dropped, at a cost in events), an on period at least one packet long, and at most
    /// [`MAX_CROSS_PACKETS`] packets sent over the run: the estimate, for the sum over sources.
    pub(super) fn check_cross_work(&self, i: usize, c: &CrossConfig) -> Result<u128, SimError> {
        let rate = c.rate_bps.unwrap_or(1);
        let fastest = self
            .links
            .iter()
            .flat_map(|l| {
                let forward = (l.a == c.src).then_some(l.forward.rate_bps);
                forward
                    .into_iter()
                    .chain((l.b == c.src).then_some(l.reverse.rate_bps))
            })
            .max();
        if let Some(fastest) = fastest.filter(|&f| rate > f) {
            return Err(err(format!(
                "cross.{i}.rate: must not exceed the fastest link out of '{}' ({fastest} \
                 bits/s), got {rate}",
                c.src
            )));
        }
        if c.is_onoff() {
            let (on, _, _) = c.periods();
            let packet_ns = (c.packet_bytes as u128 * 8 * 1_000_000_000).div_ceil(rate as u128);
            if (on as u128) < packet_ns {
                return Err(err(format!(
                    "cross.{i}.on: must be at least one packet at the rate ({packet_ns} ns for \
                     {} bytes), got {on} ns",
                    c.packet_bytes
                )));
            }
        }
        let end = c.stop_ns.unwrap_or(u64::MAX).min(self.duration_ns);
        let mut sending_ns = end.saturating_sub(c.start_ns) as u128;
        if c.is_onoff() {
            let (on, off, _) = c.periods();
            sending_ns = sending_ns * on as u128 / (on as u128 + off as u128);
        }
        let packets = sending_ns * rate as u128 / (8 * 1_000_000_000 * c.packet_bytes as u128);
        if packets > MAX_CROSS_PACKETS as u128 {
            return Err(err(format!(
                "cross.{i}.rate: sends about {packets} packets of {} bytes in the run, more than \
                 {MAX_CROSS_PACKETS}; lower the rate, raise packet_size, or stop it sooner",
                c.packet_bytes
            )));
        }
        Ok(packets)
    }
}
