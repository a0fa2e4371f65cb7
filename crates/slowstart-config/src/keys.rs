//! The scenario's TOML keys: which keys each table of a scenario file takes, in the order
//! messages list them, each with its unit kind (how the loader reads its value) and the
//! canonical field it fills (config/), its one-line meaning (the reference pages) and the key
//! a left-out one falls back to. The loader (scenario/tables.rs, `read_keys`) reads this table
//! through `defaults_json`'s `keys`, as the reference pages do; none copies it.
//!
//! A key whose canonical field has another name (`size` fills `size_bytes`) names it; a key the
//! loader expands into several fields (`swarm.delay`, a link's `rate` and its trace, each
//! `[path]` key into the two links it stands for) names them all (see [`Key::fields`]). The
//! core's messages about a link name its canonical field (`links.1.forward.queue`), and the
//! loader names it back as the scenario wrote it (`path.buffer`) by finding the key that fills it.

use serde::Serialize;

use crate::FlowConfig;

/// How the loader reads a key's value (scenario/units.rs and the other modules of scenario/).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A time such as "40ms", to integer nanoseconds.
    Time,
    /// A rate such as "250Mbps", to integer bits per second.
    Rate,
    /// A rate, or a Mahimahi trace file (`{trace = "FILE"}`).
    RateOrTrace,
    /// A size such as "32MiB", to integer bytes.
    Size,
    /// A size, or a list of sizes.
    Sizes,
    /// A size or "inf" (no limit).
    SizeOrInf,
    /// A window: a size, a number of segments ("100mss") or "inf".
    Window,
    /// A buffer: packets ("200pkt"), bytes, a time at the line rate, or BDPs ("1bdp").
    Buffer,
    /// A non-negative integer.
    Count,
    /// An integer of at least 1.
    Positive,
    /// A count, or "none".
    CountOrNone,
    /// A finite number.
    Number,
    /// A loss probability, or a Gilbert-Elliott table.
    Loss,
    /// A probability in [0, 1], or a percentage ("25%").
    Probability,
    /// A queue discipline's probability or weight: a bare number (no percentage).
    Fraction,
    /// A queue discipline's controller gain, a number in Hz.
    Gain,
    /// A number of packets, fractional allowed (RED's thresholds on the average queue).
    Packets,
    /// true or false.
    Bool,
    /// One of the words the core lists for it (`words` in `defaults_json`), or a name.
    Word,
    /// Free text.
    Text,
    /// A command line (split as a POSIX shell would) or a list of arguments.
    Command,
    /// A congestion controller: "name:key=value,..." or a table.
    Cc,
    /// A queue discipline: a word or a table (`kind = "codel"`, ...).
    Queue,
    /// A time, or a [min, max] pair of times.
    TimeRange,
    /// A list of names.
    List,
    /// A table (its keys are another entry of [`KEYS`] or the loader's, as `app`).
    Table,
    /// A list of tables (`[[flow]]`).
    Tables,
}

/// One key of a scenario table.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub key: &'static str,
    pub unit: Unit,
    /// The canonical fields it fills, dotted below the table's canonical struct (for `[path]`,
    /// below the expanded config: `links.1.forward.delay_ns`); empty where the field is the key
    /// itself.
    pub fields: &'static [Fill],
    /// One line on what it means, for the reference pages and the CLI's help.
    pub doc: &'static str,
    /// The key whose value it takes when left out (`reverse_rate` takes `rate`'s), or "".
    pub fallback: &'static str,
}

/// A canonical field a key fills, and the part of the key's value it is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fill {
    pub field: &'static str,
    /// The key of the value's table the field is read from (`trace` of `rate = {trace =
    /// "FILE"}`); empty where it is read from the whole value.
    pub from: &'static str,
}

/// A field read from the whole value.
const fn f(field: &'static str) -> Fill {
    Fill { field, from: "" }
}

/// A field read from the value's table's key `from`.
const fn sub(field: &'static str, from: &'static str) -> Fill {
    Fill { field, from }
}

/// The `fields` of a key the canonical config does not keep (`description`, a comment).
pub const NOT_KEPT: &[Fill] = &[f("(not kept)")];

const fn key(key: &'static str, unit: Unit) -> Key {
    to(key, unit, &[])
}

const fn to(key: &'static str, unit: Unit, fields: &'static [Fill]) -> Key {
    Key {
        key,
        unit,
        fields,
        doc: "",
        fallback: "",
    }
}

impl Key {
    /// The key with its one-line meaning.
    const fn doc(self, doc: &'static str) -> Key {
        Key { doc, ..self }
    }

    /// The key, taking `forward`'s value when left out.
    const fn or(self, forward: &'static str) -> Key {
        Key {
            fallback: forward,
            ..self
        }
    }
}

use Unit::*;

/// A `[[flow]]` table's keys (FlowConfig); a swarm's `tcp` and `utp` take all but
/// [`NOT_IN_SWARM_FLOW`].
const FLOW: &[Key] = &[
    key("cc", Cc).doc("algorithm: `\"name\"`, `\"name:key=value,...\"` or a table `{name = ...}`"),
    to("size", SizeOrInf, &[f("size_bytes")]).doc("bytes to transfer (\"inf\": an endless stream)"),
    to("start", Time, &[f("start_ns")]).doc("when the flow starts"),
    key("mss", Positive).doc("payload bytes per segment"),
    key("header_bytes", Count).doc("TCP/IP header bytes on the wire per packet"),
    key("initcwnd", Positive).doc("initial congestion window, segments"),
    key("initrwnd", Positive).doc("initial receive window, segments"),
    to("max_rwnd", Window, &[f("max_rwnd_bytes")])
        .doc("receive window ceiling: a size or \"Nseg\" (\"inf\": none)"),
    to("max_window", Window, &[f("max_window_bytes")])
        .doc("send window ceiling: a size or \"Nseg\" (\"inf\": none)"),
    key("handshake", Bool).doc("one RTT of SYN/SYN-ACK before data"),
    key("delayed_ack", Bool).doc("the receiver delays ACKs (RFC 1122)"),
    to("delack_timeout", Time, &[f("delack_timeout_ns")]).doc("the delayed-ACK timer"),
    key("ack_every", Positive).doc("with delayed ACKs, ACK every N full segments"),
    key("quickack", Bool).doc("Linux's quick ACKs at the start and while the window grows"),
    key("abc", Bool).doc("byte counting (RFC 3465); false counts per ACK, as ns-2 did"),
    to("min_rto", Time, &[f("min_rto_ns")]).doc("retransmission timer floor"),
    to("max_rto", Time, &[f("max_rto_ns")]).doc("retransmission timer ceiling"),
    key("pacing", Bool).doc("pace sending at the controller's rate"),
    key("pacer", Word).doc(
        "with pacing, \"linux\" (the controller's rate, else Linux's) or \"quinn\" (quinn's \
             token bucket at 1.25 cwnd/srtt, whatever the controller's rate)",
    ),
    key("recovery", Word).doc("\"prr\" (RFC 6937) or \"rfc6675\" (the plain pipe rule)"),
    key("loss_detection", Word)
        .doc("\"rack\" (RACK-TLP, RFC 8985) or \"dupthresh\" (RFC 6675 only)"),
    key("ecn", Bool).doc("ECN (RFC 3168): data ECN-capable, the window reduced on ECE"),
    key("ecn_feedback", Word).doc(
        "\"classic\" (RFC 3168: ECE until CWR), \"dctcp\" (RFC 8257: ECE per packet's CE \
             state) or \"accurate\" (RFC 9768: the ACE count of CE packets)",
    ),
    key("receiver_ecn", Word).doc(
        "the receiver's ECN, settled at the handshake (RFC 9768 §3.1.1): \"same\" (gives \
             what the sender asks), \"accurate\" (AccECN, else RFC 3168), \"classic\" (RFC 3168) \
             or \"none\"",
    ),
    key("ecn_reduction", Word).doc(
        "how an ECN echo lowers the window: \"immediate\" (cwnd to ssthresh at once) or \
             \"prr\" (PRR, RFC 6937, paces it down as Linux's CWR state does: tcp_input.c \
             `tcp_cwnd_reduction`)",
    ),
    key("cwnd_limited", Word)
        .doc("when slow start grows a held-back cwnd: \"linux\" or \"strict\""),
    key("src", Word).doc("the sending node (required in the general form)"),
    key("dst", Word).doc("the receiving node (required in the general form)"),
    key("app", Table).doc("what runs on the connection: \"bulk\", or a web or bittorrent table"),
    key("program", Table).doc("a real program pair that carries the flow in `slowstart real`"),
];

/// A `[[flow]]` key a swarm transport does not take: the swarm decides it itself.
pub const NOT_IN_SWARM_FLOW: &[&str] = &["src", "dst", "size", "start", "app", "program"];

/// Top-level keys a scenario with `[swarm]` must not give: the swarm builds its own topology
/// and connections.
pub const NOT_WITH_SWARM: &[&str] = &["path", "nodes", "link", "flow", "cross"];

/// The tables a `[swarm]` table holds.
pub const SWARM_TABLES: &[&str] = &["bittorrent", "tcp", "utp"];

/// Every scenario table's keys, by the table's name as messages write it (`swarm.bittorrent`;
/// `swarm.transport` is the keys of `swarm.tcp` and `swarm.utp`).
pub const KEYS: &[(&str, &[Key])] = &[
    (
        "top",
        &[
            key("name", Text).doc("the scenario's name (default: the file name)"),
            to("description", Text, NOT_KEPT).doc("one line shown by `slowstart list`"),
            to("duration", Time, &[f("duration_ns")]).doc("simulated time (required)"),
            key("seed", Count).doc("drives random loss, jitter and every random draw (default 0)"),
            to("path", Table, &[f("nodes"), f("links")])
                .doc("the shorthand: one sender, one bottleneck, one receiver (below)"),
            key("nodes", List).doc("the general form's node names, with [[link]] tables"),
            to("link", Tables, &[f("links")]).doc("the general form's links (below)"),
            to("flow", Tables, &[f("flows")])
                .doc("the flows (below); at least one but with [swarm]"),
            key("cross", Tables).doc("traffic without congestion control (below)"),
            key("trace", Table).doc("how the run is sampled (below)"),
            key("swarm", Table)
                .doc("a BitTorrent swarm over access links, instead of path and flows (below)"),
        ],
    ),
    // Each `[path]` key fills fields of the two links it expands into (scenario/links.rs
    // `expand_path`: 0 the access link, 1 the bottleneck); a reverse key left out takes its
    // forward key's value.
    (
        "path",
        &[
            to(
                "rate",
                RateOrTrace,
                &[
                    f("links.1.forward.rate_bps"),
                    sub("links.1.forward.rate_trace_ms", "trace"),
                ],
            )
            .doc("bottleneck rate, forward (required), or `{trace = FILE}`"),
            to(
                "rtt",
                Time,
                &[f("links.1.forward.delay_ns"), f("links.1.reverse.delay_ns")],
            )
            .doc("base round-trip propagation delay, rtt/2 each way (required)"),
            to("buffer", Buffer, &[f("links.1.forward.queue")])
                .doc("bottleneck buffer, both directions unless reverse_buffer"),
            to(
                "loss",
                Loss,
                &[
                    f("links.1.forward.loss"),
                    f("links.1.forward.gilbert_elliott"),
                ],
            )
            .doc("random loss (forward), or a Gilbert-Elliott table `{p, r, ...}`"),
            to(
                "access_rate",
                Rate,
                &[f("links.0.forward.rate_bps"), f("links.0.reverse.rate_bps")],
            )
            .doc("the sender's own link, both ways"),
            to(
                "reverse_rate",
                RateOrTrace,
                &[
                    f("links.1.reverse.rate_bps"),
                    sub("links.1.reverse.rate_trace_ms", "trace"),
                ],
            )
            .doc("bottleneck rate for ACKs")
            .or("rate"),
            to("reverse_buffer", Buffer, &[f("links.1.reverse.queue")])
                .doc("the reverse direction's buffer")
                .or("buffer"),
            to("jitter", Time, &[f("links.1.forward.jitter_ns")])
                .doc("extra delay per packet in [0, jitter] (forward), never reordering"),
            to("drop", Tables, &[f("links.1.forward.drops")])
                .doc("deterministic drops (forward): `[{flow = 0, seq = 50}]`"),
            to("queue", Queue, &[f("links.1.forward.discipline")]).doc(
                "discipline: \"droptail\", \"codel\", \"fq_codel\", \"pie\", \"red\", \
                     \"dualpi2\", or a table",
            ),
            to("reverse_queue", Queue, &[f("links.1.reverse.discipline")])
                .doc("the reverse direction's discipline")
                .or("queue"),
            to(
                "ecn",
                Bool,
                &[f("links.1.forward.ecn"), f("links.1.reverse.ecn")],
            )
            .doc("the queue marks ECN-capable packets instead of dropping them"),
        ],
    ),
    (
        "link",
        &[
            key("name", Text).doc("the link's name (default \"a-b\" from its ends)"),
            key("a", Word).doc("one end; forward is a to b (required)"),
            key("b", Word).doc("the other end (required)"),
            to(
                "rate",
                RateOrTrace,
                &[f("forward.rate_bps"), sub("forward.rate_trace_ms", "trace")],
            )
            .doc("line rate, forward (required), or `{trace = FILE}`"),
            to("delay", Time, &[f("forward.delay_ns")]).doc("one-way propagation delay (required)"),
            to("buffer", Buffer, &[f("forward.queue")])
                .doc("buffer: packets, bytes or a time at the line rate (required)"),
            to(
                "loss",
                Loss,
                &[f("forward.loss"), f("forward.gilbert_elliott")],
            )
            .doc("random loss (forward), or a Gilbert-Elliott table `{p, r, ...}`"),
            to(
                "reverse_rate",
                RateOrTrace,
                &[f("reverse.rate_bps"), sub("reverse.rate_trace_ms", "trace")],
            )
            .doc("the reverse direction's rate")
            .or("rate"),
            to("reverse_delay", Time, &[f("reverse.delay_ns")])
                .doc("the reverse direction's delay")
                .or("delay"),
            to("reverse_buffer", Buffer, &[f("reverse.queue")])
                .doc("the reverse direction's buffer")
                .or("buffer"),
            to("jitter", Time, &[f("forward.jitter_ns")])
                .doc("extra delay per packet in [0, jitter] (forward), never reordering"),
            to("drop", Tables, &[f("forward.drops")])
                .doc("deterministic drops (forward): `[{flow = 0, seq = 50}]`"),
            to("queue", Queue, &[f("forward.discipline")]).doc(
                "discipline: \"droptail\", \"codel\", \"fq_codel\", \"pie\", \"red\", \
                     \"dualpi2\", or a table",
            ),
            to("reverse_queue", Queue, &[f("reverse.discipline")])
                .doc("the reverse direction's discipline")
                .or("queue"),
            to("ecn", Bool, &[f("forward.ecn"), f("reverse.ecn")])
                .doc("the queue marks ECN-capable packets instead of dropping them"),
        ],
    ),
    (
        "drop",
        &[
            key("flow", Count)
                .doc("the flow whose segment is dropped, numbered from 0 in file order"),
            key("seq", Count).doc("the data segment dropped, counted from 1"),
        ],
    ),
    (
        "cross",
        &[
            key("kind", Word).doc("\"cbr\" (always on) or \"onoff\" (on and off periods)"),
            key("src", Word).doc("the sending node"),
            key("dst", Word).doc("the receiving node"),
            to("rate", Rate, &[f("rate_bps")])
                .doc("the rate while on, every byte of the packet counted (required)"),
            to("packet_size", Size, &[f("packet_bytes")]).doc("bytes on the wire per packet"),
            to("start", Time, &[f("start_ns")]).doc("when it starts"),
            to("stop", Time, &[f("stop_ns")]).doc("when it stops (default: the end of the run)"),
            to("on", Time, &[f("on_ns")])
                .doc("onoff: (mean) on period (left out: ns-2's Exponential default)"),
            to("off", Time, &[f("off_ns")])
                .doc("onoff: (mean) off period (left out: ns-2's Exponential default)"),
            key("distribution", Word).doc("onoff: \"exponential\" or \"fixed\" periods"),
        ],
    ),
    (
        "trace",
        &[
            to("flow_interval", Time, &[f("flow_interval_ns")])
                .doc("sample each flow at most this often (0: every ACK)"),
            to("queue_interval", Time, &[f("queue_interval_ns")])
                .doc("sample each queue at most this often (0: every change)"),
            key("max_rows", Count).doc("rows per table; past it, every other row goes"),
        ],
    ),
    ("flow", FLOW),
    // The BitTorrent swarm of Testa and Rossi, "The impact of uTP on BitTorrent completion
    // time" (SwarmConfig).
    (
        "swarm",
        &[
            key("seeds", Count).doc("seeds at t = 0; they never leave"),
            key("leechers", Count).doc("leechers arriving with exponential inter-arrival times"),
            to("arrival_mean", Time, &[f("arrival_mean_ns")]).doc("mean inter-arrival time"),
            to("file", Size, &[f("file_bytes")]).doc("the file"),
            to("piece", Size, &[f("piece_bytes")]).doc("a piece (block <= piece <= file)"),
            to("block", Size, &[f("block_bytes")]).doc("a block, the request unit"),
            key("population", Word)
                .doc("the leechers' upload transport: \"tcp\", \"utp\" or \"50-50\""),
            key("connection_transport", Word).doc(
                "\"uploader\": each direction its uploader's transport (the paper's); \
                     \"connector\": both the opener's, as a real connection",
            ),
            key("seeding", Word).doc("\"never-leave\" or \"random-stay\" after completing"),
            key("stay_factor", Number).doc("random-stay: mean stay over the own download time"),
            to("stop_after", CountOrNone, &[f("stop_after_completions")])
                .doc("end at this many completions (\"none\": never)"),
            to("queue_sample", Time, &[f("queue_sample_ns")])
                .doc("how often uplink and request queues are sampled (a real swarm's peers too)"),
            key("traced_peers", Count)
                .doc("the flow trace of every upload by peers 0..N, seeds first (0: none)"),
            to("up", Rate, &[f("access.up_bps")]).doc("every access link's uplink"),
            to("down", Rate, &[f("access.down_bps")]).doc("every access link's downlink"),
            to("buffer", Buffer, &[f("access.up_queue")]).doc("uplink drop-tail buffer"),
            to("down_buffer", Buffer, &[f("access.down_queue")]).doc("downlink buffer"),
            to(
                "delay",
                TimeRange,
                &[f("access.delay_min_ns"), f("access.delay_max_ns")],
            )
            .doc("one-way delay of each access link: [min, max] or one time"),
            key("bittorrent", Table).doc("the BitTorrent protocol's settings, below"),
            key("tcp", Table).doc("TCP uploads and control connections: [[flow]] keys"),
            key("utp", Table).doc("uTP uploads: [[flow]] keys"),
        ],
    ),
    (
        "swarm.bittorrent",
        &[
            key("tracker_peers", Count).doc("peers a tracker announce returns"),
            key("min_peers", Count).doc("below this many, announce again"),
            key("max_initiate", Count).doc("connections a peer opens itself"),
            key("max_connections", Count).doc("connections a peer keeps"),
            to("reannounce", Time, &[f("reannounce_ns")]).doc("tracker re-announce interval"),
            key("unchoke_slots", Count).doc("uploads at once, the optimistic one included"),
            to("rechoke", Time, &[f("rechoke_ns")]).doc("choke decision interval"),
            to("rate_window", Time, &[f("rate_window_ns")])
                .doc("window of the rates chokes are decided on"),
            to("optimistic", Time, &[f("optimistic_ns")]).doc("optimistic unchoke interval"),
            key("new_peer_weight", Count).doc("weight of new peers in the optimistic draw"),
            key("pipeline", Count).doc("requests outstanding per connection"),
            to("request_queue_time", Time, &[f("request_queue_time_ns")]).doc(
                "0: always `pipeline` requests; else libtorrent's queue, this long of the \
                     connection's download rate, from `pipeline` (docs/real-swarm.md)",
            ),
            key("piece_picker", Word).doc(
                "\"module\": a started piece first (the paper's); \"libtorrent\": rarest \
                     first, a started piece first only among the equally rare \
                     (docs/real-swarm.md)",
            ),
            to(
                "whole_pieces_threshold",
                Time,
                &[f("whole_pieces_threshold_ns")],
            )
            .doc(
                "0: off; else with the \"libtorrent\" picker, a connection that brings a \
                     piece within this long is asked for whole pieces (libtorrent: 20s)",
            ),
            key("hold_requests_beyond_target", Bool).doc(
                "false: every picked block requested at once; true: beyond the request \
                     queue's target they wait at the downloader, as libtorrent's \
                     (docs/real-swarm.md)",
            ),
            key("send_buffer", Word).doc(
                "\"transport\": the next block once the last has left the transport (the \
                     paper's); \"libtorrent\": while the unsent bytes are below the watermark \
                     (docs/real-swarm.md)",
            ),
            to(
                "send_buffer_watermark",
                Size,
                &[f("send_buffer_watermark_bytes")],
            )
            .doc("the watermark's upper bound (libtorrent: 500KiB)"),
            to(
                "send_buffer_low_watermark",
                Size,
                &[f("send_buffer_low_watermark_bytes")],
            )
            .doc("the watermark's lower bound (libtorrent: 10KiB)"),
            key("send_buffer_watermark_factor", Count)
                .doc("the watermark, percent of the payload uploaded in the last second (50)"),
            to(
                "send_not_sent_low_watermark",
                Size,
                &[f("send_not_sent_low_watermark_bytes")],
            )
            .doc("unsent bytes a TCP socket holds beyond the watermark (libtorrent: 16KiB)"),
            key("messages", Word).doc(
                "\"separate\": a control stream each way (the model's); \"with_data\": in \
                     the sender's data stream behind its piece data, as on a real connection",
            ),
            key("end_game", Bool).doc("request the last blocks from every peer"),
            key("anti_snubbing", Bool).doc("choke peers that send nothing for `snub`"),
            to("snub", Time, &[f("snub_ns")]).doc("anti-snubbing's timeout"),
            key("super_seeding", Bool).doc("not modelled: true is refused"),
        ],
    ),
    // A flow's application (`app = {kind = "web", ...}`, AppConfig), one table per kind.
    (
        "app.bulk",
        &[key("kind", Word).doc("\"bulk\", \"web\" or \"bittorrent\"")],
    ),
    (
        "app.web",
        &[
            key("kind", Word).doc("\"bulk\", \"web\" or \"bittorrent\""),
            to("request", Size, &[f("request_bytes")]).doc("bytes of each request"),
            to("response", Sizes, &[f("response_bytes")])
                .doc("the object, or a list of sizes cycled over the fetches"),
            key("objects", Count).doc("sequential fetches (default: one per response size)"),
            key("keep_alive", Bool).doc("one connection for every object, else one each"),
        ],
    ),
    (
        "app.bittorrent",
        &[
            key("kind", Word).doc("\"bulk\", \"web\" or \"bittorrent\""),
            to("block", Size, &[f("block_bytes")]).doc("bytes per request"),
            to("queue_time", Time, &[f("queue_time_ns")])
                .doc("target = rate x queue_time / block (libtorrent)"),
            key("min_queue", Count).doc("least requests kept outstanding"),
            key("max_queue", Count).doc("most requests kept outstanding"),
            key("app_slow_start", Bool).doc("libtorrent 1.0.6's request slow start"),
            to(
                "slow_start_threshold",
                Size,
                &[f("slow_start_threshold_bytes")],
            )
            .doc("growth per second below which it ends"),
            key("blocks", Count).doc("blocks to download (default: until the end)"),
        ],
    ),
    // A real program pair carrying a flow in `slowstart real` (ProgramConfig).
    (
        "program",
        &[
            key("server", Command)
                .doc("command started first (a string split as by a shell, or a list)"),
            key("client", Command)
                .doc("command started at the flow's start; its exit ends the flow"),
            key("sends", Word)
                .doc("\"server\" (a download) or \"client\" (an upload): runs in ss-snd"),
            key("port", Count).doc("the server's port (default: 5001 + the flow's index)"),
            key("ends", Word)
                .doc("\"client\": its exit ends the flow; \"both\": the server exits too"),
        ],
    ),
    // A Gilbert-Elliott `loss = {p = ..., ...}` table (GilbertElliott): netem's gemodel.
    (
        "loss",
        &[
            key("p", Probability)
                .doc("probability of going from the good state to the bad one, per packet"),
            key("r", Probability)
                .doc("probability of going from the bad state back to the good one, per packet"),
            key("loss_bad", Probability).doc("loss probability in the bad state"),
            key("loss_good", Probability).doc("loss probability in the good state"),
        ],
    ),
    // A link's queue discipline (`queue = {kind = "codel", ...}`, Discipline), one table per
    // kind, its parameters in the order messages list them; the kind is the tag.
    ("queue.droptail", &[]),
    (
        "queue.codel",
        &[
            to("target", Time, &[f("target_ns")])
                .doc("acceptable standing queue delay (RFC 8289 §4.4)"),
            to("interval", Time, &[f("interval_ns")])
                .doc("window over which the sojourn time must stay above target (§4.3)"),
            to("mtu", Size, &[f("mtu_bytes")])
                .doc("no drop while at most this many bytes are queued (§5.5 `maxpacket`)"),
        ],
    ),
    (
        "queue.fq_codel",
        &[
            key("flows", Positive).doc("flow queues (RFC 8290 §5.2)"),
            to("quantum", Size, &[f("quantum_bytes")])
                .doc("bytes a queue may send per round (§5.2)"),
            to("target", Time, &[f("target_ns")]).doc("each queue's CoDel target"),
            to("interval", Time, &[f("interval_ns")]).doc("each queue's CoDel interval"),
            to("memory_limit", Size, &[f("memory_limit_bytes")])
                .doc("bytes queued in all before the fattest flow loses packets (§4.1)"),
        ],
    ),
    (
        "queue.pie",
        &[
            to("target", Time, &[f("target_ns")])
                .doc("target queue delay `QDELAY_REF` (RFC 8033 §4.2)"),
            to("t_update", Time, &[f("t_update_ns")])
                .doc("drop probability update interval `T_UPDATE` (§4.2)"),
            key("alpha", Gain).doc("integral gain, Hz (§4.2)"),
            key("beta", Gain).doc("proportional gain, Hz (§4.2)"),
            to("max_burst", Time, &[f("max_burst_ns")]).doc("burst allowance `MAX_BURST` (§4.4)"),
        ],
    ),
    (
        "queue.red",
        &[
            key("min_th", Packets).doc("average queue, packets, above which packets are signalled"),
            key("max_th", Packets)
                .doc("average queue, packets, at which the probability reaches max_p"),
            key("max_p", Fraction).doc("signal probability at max_th"),
            key("w_q", Fraction).doc("weight of each sample in the average queue"),
            key("gentle", Bool)
                .doc("between max_th and 2 max_th the probability rises to 1 (Floyd 2000)"),
            key("hard_drop", Bool)
                .doc("forced signals are drops (RFC 3168 §7); false marks ECN-capable packets"),
        ],
    ),
    (
        "queue.dualpi2",
        &[
            to("target", Time, &[f("target_ns")])
                .doc("PI2's target queueing delay (RFC 9332 §A.1)"),
            to("t_update", Time, &[f("t_update_ns")]).doc("update period of the base probability"),
            key("alpha", Gain).doc("integral gain, Hz"),
            key("beta", Gain).doc("proportional gain, Hz"),
            to("step", Time, &[f("step_ns")]).doc("an L packet that waited this long is marked"),
            key("coupling", Gain).doc("k: L packets are marked with k p'"),
            key("c_protection", Fraction)
                .doc("share of the bytes the C queue gets while both queues wait"),
            key("drop_overload", Bool)
                .doc("on overload (k p' above 1, §4.2.3) drop instead of marking"),
        ],
    ),
];

/// The queue disciplines' kinds, in the order of their tables in [`KEYS`] (`queue.KIND`).
fn queue_kinds() -> Vec<&'static str> {
    KEYS.iter()
        .filter_map(|(name, _)| name.strip_prefix("queue."))
        .collect()
}

/// The keys of `table` (a name of [`KEYS`], or `swarm.transport`).
pub fn keys_of(table: &str) -> Vec<Key> {
    if table == "swarm.transport" {
        return FLOW
            .iter()
            .filter(|k| !NOT_IN_SWARM_FLOW.contains(&k.key))
            .copied()
            .collect();
    }
    KEYS.iter()
        .find(|(name, _)| *name == table)
        .map(|(_, keys)| keys.to_vec())
        .unwrap_or_else(|| panic!("no scenario table {table}"))
}

/// The canonical fields a key fills: its own name where it names none, none where the config
/// does not keep it.
pub fn fills_of(k: &Key) -> Vec<Fill> {
    if k.fields.is_empty() {
        vec![f(k.key)]
    } else {
        k.fields
            .iter()
            .filter(|fill| !fill.field.starts_with('('))
            .copied()
            .collect()
    }
}

/// The fields of the default flow (`flow`, every field as `defaults_json` lists them) that a
/// config does not write at that value (serde's `skip_serializing_if` on [`FlowConfig`]):
/// those missing from the default's serialization.
fn unwritten_flow_fields(flow: &serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    let written = serde_json::to_value(FlowConfig::new("", "")).expect("a config serializes");
    flow.as_object()
        .expect("the default flow is a table")
        .iter()
        .filter(|(field, _)| written.get(field.as_str()).is_none())
        .map(|(field, value)| (field.clone(), value.clone()))
        .collect()
}

/// The table as JSON, for `defaults_json` (`flow`: the default flow it lists; `words`: every
/// choice's `[word, value]` pairs in order, by key): `{"tables": {TABLE: [{key, unit, field, fields, doc, fallback?,
/// words?, unwritten?}]}, ...}`, `fallback` the key whose value a key left out takes, `words`
/// a word key's accepted words, `field` the one
/// canonical field a key fills (null where it fills several or the config does not keep it),
/// `fields` every field it fills as `{field, from}` ([`Fill`]), `unwritten` (present only for
/// such a field) the value at which a config leaves the field out, so that the loader does
/// too; then `not_in_swarm_flow`, `not_with_swarm`, `swarm_tables` and `queue_kinds`
/// (the kinds of the `queue.KIND` tables in their order; `tables` is a map, which JSON does
/// not keep in order).
pub fn keys_json(flow: &serde_json::Value, words: &serde_json::Value) -> serde_json::Value {
    let unwritten = unwritten_flow_fields(flow);
    let mut tables = serde_json::Map::new();
    let names = KEYS
        .iter()
        .map(|(name, _)| *name)
        .chain(["swarm.transport"]);
    for name in names {
        let list = keys_of(name)
            .iter()
            .map(|k| {
                let fills = fills_of(k);
                let field = match fills.as_slice() {
                    [one] => serde_json::Value::from(one.field),
                    _ => serde_json::Value::Null,
                };
                let fields: Vec<_> = fills
                    .iter()
                    .map(|fill| serde_json::json!({"field": fill.field, "from": fill.from}))
                    .collect();
                let mut entry = serde_json::json!({
                    "key": k.key, "unit": k.unit, "field": field, "fields": fields, "doc": k.doc,
                });
                if !k.fallback.is_empty() {
                    entry["fallback"] = k.fallback.into();
                }
                if let (Word, Some(listed)) = (k.unit, words.get(k.key)) {
                    let pairs = listed.as_array().into_iter().flatten();
                    entry["words"] = pairs.map(|pair| pair[0].clone()).collect();
                }
                let flow_table = name == "flow" || name == "swarm.transport";
                if let (true, [one]) = (flow_table, fills.as_slice()) {
                    if let Some(value) = unwritten.get(one.field) {
                        entry["unwritten"] = value.clone();
                    }
                }
                entry
            })
            .collect();
        tables.insert(name.to_string(), serde_json::Value::Array(list));
    }
    serde_json::json!({
        "tables": tables,
        "not_in_swarm_flow": NOT_IN_SWARM_FLOW,
        "not_with_swarm": NOT_WITH_SWARM,
        "swarm_tables": SWARM_TABLES,
        "queue_kinds": queue_kinds(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        AccessConfig, BittorrentConfig, CodelConfig, CrossConfig, DirectionConfig, Discipline,
        DropSpec, DualPi2Config, FlowConfig, FqCodelConfig, GilbertElliott, LinkConfig, PieConfig,
        ProgramConfig, Recovery, RedConfig, SimConfig, SwarmBittorrentConfig, SwarmConfig,
        TraceConfig, WebConfig,
    };
    use serde::de::DeserializeOwned;
    use std::collections::BTreeSet;

    /// Every field serde reads into `T`, from its own list of them (`deny_unknown_fields`
    /// names every field it expects when it meets one it does not).
    fn serde_fields<T: DeserializeOwned + std::fmt::Debug>(prefix: &str) -> BTreeSet<String> {
        let error = serde_json::from_str::<T>(r#"{"?": 0}"#).expect_err("an unknown field");
        let text = error.to_string();
        let (_, expected) = text.split_once("expected").expect("serde lists the fields");
        expected
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|f| format!("{prefix}{f}"))
            .collect()
    }

    /// The canonical fields a key fills, by name.
    fn fields_of(k: &Key) -> Vec<&'static str> {
        fills_of(k).iter().map(|fill| fill.field).collect()
    }

    /// The canonical fields `table`'s keys fill.
    fn reached(table: &str) -> BTreeSet<String> {
        keys_of(table)
            .iter()
            .flat_map(fields_of)
            .map(String::from)
            .collect()
    }

    /// Each table's keys fill every field of its canonical struct but the ones named here
    /// (with why), and no field the struct does not have.
    fn check(table: &str, canonical: BTreeSet<String>, derived: &[&str]) {
        let derived: BTreeSet<String> = derived.iter().map(|f| f.to_string()).collect();
        let reached = reached(table);
        let missing: Vec<_> = canonical
            .difference(&reached)
            .filter(|f| !derived.contains(*f))
            .collect();
        assert!(
            missing.is_empty(),
            "{table}: no scenario key fills {missing:?} (keys.rs)"
        );
        let unknown: Vec<_> = reached
            .union(&derived)
            .filter(|f| !canonical.contains(*f))
            .collect();
        assert!(
            unknown.is_empty(),
            "{table}: {unknown:?} are no canonical fields"
        );
    }

    fn direction(side: &str) -> BTreeSet<String> {
        serde_fields::<DirectionConfig>(&format!("{side}."))
    }

    #[test]
    fn every_canonical_field_has_a_scenario_key() {
        // `slowstart compare` sets run_to_end; no scenario does.
        check("top", serde_fields::<SimConfig>(""), &["run_to_end"]);
        check("flow", serde_fields::<FlowConfig>(""), &[]);
        // What a swarm decides itself for every connection.
        let fixed = ["src", "dst", "size_bytes", "start_ns", "app", "program"];
        check("swarm.transport", serde_fields::<FlowConfig>(""), &fixed);
        check("cross", serde_fields::<CrossConfig>(""), &[]);
        check("trace", serde_fields::<TraceConfig>(""), &[]);
        check("drop", serde_fields::<DropSpec>(""), &[]);
        let mut swarm = serde_fields::<SwarmConfig>("");
        swarm.remove("access");
        swarm.extend(serde_fields::<AccessConfig>("access."));
        check("swarm", swarm, &[]);
        check(
            "swarm.bittorrent",
            serde_fields::<SwarmBittorrentConfig>(""),
            &[],
        );
        let mut link = serde_fields::<LinkConfig>("");
        link.remove("forward");
        link.remove("reverse");
        link.extend(direction("forward"));
        link.extend(direction("reverse"));
        // A [[link]]'s loss, jitter and scheduled drops are its forward direction's.
        let forward_only = [
            "reverse.loss",
            "reverse.gilbert_elliott",
            "reverse.jitter_ns",
            "reverse.drops",
        ];
        check("link", link, &forward_only);
        // An application's kind is the tag of AppConfig, not a field of its kind's struct.
        let tagged = |mut fields: BTreeSet<String>| {
            fields.insert("kind".into());
            fields
        };
        check("app.bulk", tagged(BTreeSet::new()), &[]);
        check("app.web", tagged(serde_fields::<WebConfig>("")), &[]);
        check(
            "app.bittorrent",
            tagged(serde_fields::<BittorrentConfig>("")),
            &[],
        );
        check("program", serde_fields::<ProgramConfig>(""), &[]);
        check("loss", serde_fields::<GilbertElliott>(""), &[]);
    }

    /// The fields serde reads into a discipline of `d`'s kind, but its tag `kind`.
    fn discipline_fields(d: &Discipline) -> BTreeSet<String> {
        match d {
            Discipline::DropTail => BTreeSet::new(),
            Discipline::Codel(_) => serde_fields::<CodelConfig>(""),
            Discipline::FqCodel(_) => serde_fields::<FqCodelConfig>(""),
            Discipline::Pie(_) => serde_fields::<PieConfig>(""),
            Discipline::Red(_) => serde_fields::<RedConfig>(""),
            Discipline::DualPi2(_) => serde_fields::<DualPi2Config>(""),
        }
    }

    /// Each discipline has a table `queue.KIND` whose keys fill its variant's fields, in the
    /// order its kinds are listed, and there is no other `queue.` table.
    #[test]
    fn each_discipline_has_its_table_of_parameters() {
        let disciplines = Discipline::each_with_defaults();
        let names: Vec<_> = disciplines.iter().map(Discipline::name).collect();
        assert_eq!(queue_kinds(), names);
        for d in &disciplines {
            // The kind is the serialized tag, but drop-tail's: the loader leaves the default
            // discipline out of a config (serde calls it `drop_tail`).
            if !d.is_drop_tail() {
                let written = serde_json::to_value(d).expect("a discipline serializes");
                assert_eq!(written["kind"], d.name());
            }
            check(&format!("queue.{}", d.name()), discipline_fields(d), &[]);
        }
    }

    #[test]
    fn each_path_key_fills_fields_of_the_two_links_it_expands_into() {
        let mut link = direction("forward");
        link.extend(direction("reverse"));
        for k in keys_of("path") {
            let fields = fields_of(&k);
            assert!(!fields.is_empty(), "path.{} fills nothing", k.key);
            for field in fields {
                let rest = ["links.0.", "links.1."]
                    .iter()
                    .find_map(|link| field.strip_prefix(link))
                    .unwrap_or_else(|| panic!("path.{}: {field} is no field of a link", k.key));
                assert!(
                    link.contains(rest),
                    "path.{}: {field} is no canonical field",
                    k.key
                );
            }
        }
    }

    /// The key of `table` whose fields hold the message's field, and what of the field is left.
    fn key_of_message(table: &str, message: &str) -> Option<(&'static str, String)> {
        let (field, _) = message.split_once(": ")?;
        keys_of(table).iter().find_map(|k| {
            fields_of(k).iter().find_map(|f| {
                let rest = field.strip_prefix(f)?;
                (rest.is_empty() || rest.starts_with('.')).then(|| (k.key, rest.to_string()))
            })
        })
    }

    /// Each message about a `[path]` link names a field that the key the scenario wrote fills:
    /// the loader names the key from it (scenario/links.rs `scenario_field`).
    #[test]
    fn a_link_message_names_a_field_its_path_key_fills() {
        use crate::testing::{flow, path, MS};
        use crate::QueueLimit;
        type Edit = fn(&mut SimConfig);
        let cases: [(Edit, &str, &str); 13] = [
            (|c| c.links[1].forward.rate_bps = 0, "rate", ""),
            (
                |c| c.links[1].forward.rate_trace_ms = vec![5, 1],
                "rate",
                "",
            ),
            (|c| c.links[1].reverse.rate_bps = 0, "reverse_rate", ""),
            (|c| c.links[1].reverse.delay_ns = u64::MAX, "rtt", ""),
            (|c| c.links[1].forward.jitter_ns = u64::MAX, "jitter", ""),
            (|c| c.links[1].forward.loss = 1.0, "loss", ""),
            (
                |c| {
                    c.links[1].forward.gilbert_elliott = Some(GilbertElliott {
                        p: 2.0,
                        r: 0.5,
                        loss_bad: 1.0,
                        loss_good: 0.0,
                    })
                },
                "loss",
                ".p",
            ),
            (
                |c| c.links[1].forward.queue = QueueLimit::Packets(0),
                "buffer",
                "",
            ),
            (
                |c| c.links[1].reverse.queue = QueueLimit::Bytes(10),
                "reverse_buffer",
                "",
            ),
            (
                |c| {
                    c.links[1].forward.discipline = Discipline::Codel(CodelConfig {
                        target_ns: 0,
                        ..CodelConfig::default()
                    })
                },
                "queue",
                ".target_ns",
            ),
            (
                |c| c.links[1].forward.drops = vec![DropSpec { flow: 5, seq: 1 }],
                "drop",
                ".0.flow",
            ),
            (|c| c.links[0].forward.rate_bps = 0, "access_rate", ""),
            (|c| c.links[0].reverse.rate_bps = 0, "access_rate", ""),
        ];
        for (edit, key, rest) in cases {
            let mut cfg = path(
                10_000_000,
                50 * MS,
                QueueLimit::Packets(50),
                vec![flow("reno", None)],
                vec![],
            );
            cfg.validate().unwrap();
            edit(&mut cfg);
            let message = cfg.validate().unwrap_err().0;
            let named = key_of_message("path", &message);
            assert_eq!(named, Some((key, rest.to_string())), "{message}");
            // The same field below a [[link]] is the link key's own.
            let link = message
                .strip_prefix("links.1.")
                .or(message.strip_prefix("links.0."));
            let link_key = link.and_then(|m| key_of_message("link", m));
            assert!(link_key.is_some(), "no [[link]] key fills {message}");
        }
    }

    #[test]
    fn a_flow_key_written_only_when_set_carries_the_value_it_is_left_out_at() {
        let d: serde_json::Value = serde_json::from_str(&crate::defaults_json()).unwrap();
        for table in ["flow", "swarm.transport"] {
            let marked: Vec<(&str, &serde_json::Value)> = d["keys"]["tables"][table]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|k| Some((k["key"].as_str()?, k.get("unwritten")?)))
                .collect();
            let mut want = vec![
                ("pacer", serde_json::json!("linux")),
                ("ecn", serde_json::json!(false)),
                ("ecn_feedback", serde_json::json!("classic")),
                ("receiver_ecn", serde_json::json!("same")),
                ("ecn_reduction", serde_json::json!("immediate")),
                ("cwnd_limited", serde_json::json!("linux")),
            ];
            if table == "flow" {
                want.push(("program", serde_json::Value::Null));
            }
            let want: Vec<_> = want.iter().map(|(k, v)| (*k, v)).collect();
            assert_eq!(marked, want, "{table}");
        }
    }

    #[test]
    fn keys_are_listed_once_and_the_named_keys_exist() {
        for (table, keys) in KEYS {
            let names: BTreeSet<_> = keys.iter().map(|k| k.key).collect();
            assert_eq!(names.len(), keys.len(), "{table}: a key is listed twice");
            // One key per field, so that a message naming the field names the key (the top
            // level's `path` and `nodes`/`link` are alternatives that fill the same fields).
            if *table != "top" {
                let fields: Vec<_> = keys.iter().flat_map(fields_of).collect();
                let once: BTreeSet<_> = fields.iter().collect();
                assert_eq!(once.len(), fields.len(), "{table}: a field is filled twice");
            }
        }
        for name in NOT_IN_SWARM_FLOW {
            assert!(FLOW.iter().any(|k| k.key == *name), "{name} is no flow key");
        }
        let top = keys_of("top");
        for name in NOT_WITH_SWARM {
            assert!(
                top.iter().any(|k| k.key == *name),
                "{name} is no top-level key"
            );
        }
        let swarm = keys_of("swarm");
        for name in SWARM_TABLES {
            assert!(
                swarm.iter().any(|k| k.key == *name && k.unit == Table),
                "swarm.{name}"
            );
        }
    }
    #[test]
    fn every_key_has_a_meaning_and_its_fallback_is_a_key_of_its_table_with_its_unit() {
        for (table, keys) in KEYS {
            for k in keys.iter() {
                let at = format!("{table}.{}", k.key);
                assert!(!k.doc.is_empty() && !k.doc.contains('\n'), "{at}: one line");
                if !k.fallback.is_empty() {
                    let forward = keys.iter().find(|f| f.key == k.fallback);
                    assert_eq!(forward.map(|f| f.unit), Some(k.unit), "{at}");
                }
            }
        }
    }

    #[test]
    fn a_word_key_lists_the_words_the_core_accepts() {
        let d: serde_json::Value = serde_json::from_str(&crate::defaults_json()).unwrap();
        let recovery = d["keys"]["tables"]["flow"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["key"] == "recovery")
            .unwrap();
        let want: Vec<_> = Recovery::WORDS.iter().map(|(w, _)| *w).collect();
        assert_eq!(recovery["words"], serde_json::json!(want));
    }
}
