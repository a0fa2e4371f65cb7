//! Bounds that follow from the model, and settings that contradict each other: each refused
//! with one message naming the field, before anything is built (issue #31).

use slowstart_config::testing::{flow, path, MS, SEC};
use slowstart_config::{
    CrossConfig, Discipline, FqCodelConfig, GilbertElliott, LinkConfig, QueueLimit, SimConfig,
    SwarmConfig,
};
use slowstart_link::topology::Topology;

fn reno_path() -> SimConfig {
    path(
        10_000_000,
        50 * MS,
        QueueLimit::Packets(50),
        vec![flow("reno", Some(1_000_000))],
        vec![],
    )
}

fn refused(cfg: &SimConfig, want: &str) {
    let e = cfg.validate().unwrap_err().0;
    assert!(e.starts_with(want), "{e}");
}

/// Many nodes, one flow: routes cost memory with the nodes and the flows' ends, not the nodes
/// squared (60 000 nodes asked for 14.4 GB).
#[test]
fn routes_grow_with_nodes_times_destinations_and_are_bounded() {
    let mut cfg = reno_path();
    let spare = (0..60_000).map(|i| format!("spare{i}"));
    cfg.nodes.extend(spare);
    cfg.validate().unwrap();
    let topo = Topology::build(&cfg).unwrap();
    assert_eq!(topo.route(0, 2).len(), 2);
    // 2 000 flows between distinct pairs: 4 000 destinations over 20 000 nodes.
    let mut cfg = reno_path();
    cfg.nodes = (0..20_000).map(|i| format!("n{i}")).collect();
    let link = cfg.links[1].clone();
    cfg.links = (0..2_000)
        .map(|k| LinkConfig {
            name: format!("l{k}"),
            a: format!("n{}", 2 * k),
            b: format!("n{}", 2 * k + 1),
            ..link.clone()
        })
        .collect();
    cfg.flows = (0..2_000)
        .map(|k| slowstart_config::FlowConfig {
            size_bytes: Some(1),
            ..slowstart_config::FlowConfig::new(&format!("n{}", 2 * k), &format!("n{}", 2 * k + 1))
        })
        .collect();
    refused(
        &cfg,
        "nodes: routes over 20000 nodes and 2000 links to 4000 destinations",
    );
}

fn cross(rate_bps: u64) -> CrossConfig {
    CrossConfig {
        rate_bps: Some(rate_bps),
        ..serde_json::from_str("{}").unwrap()
    }
}

#[test]
fn a_cross_source_is_no_faster_than_its_link_and_on_for_a_packet_at_least() {
    let mut cfg = reno_path();
    // The access link out of the sender: 10 Gbps.
    cfg.cross = vec![cross(10_000_000_000)];
    cfg.validate().unwrap();
    cfg.cross = vec![cross(10_000_000_001)];
    refused(
        &cfg,
        "cross.0.rate: must not exceed the fastest link out of 'sender' (10000000000 bits/s)",
    );
    // 1500 bytes at 12 Mbps: 1 ms.
    let mut c = cross(12_000_000);
    c.kind = "onoff".into();
    c.on_ns = Some(MS);
    cfg.cross = vec![c.clone()];
    cfg.validate().unwrap();
    c.on_ns = Some(MS - 1);
    cfg.cross = vec![c];
    refused(
        &cfg,
        "cross.0.on: must be at least one packet at the rate (1000000 ns",
    );
}

#[test]
fn a_loss_model_that_loses_every_packet_is_refused_as_loss_1_is() {
    let ge = |p, r, loss_bad, loss_good| GilbertElliott {
        p,
        r,
        loss_bad,
        loss_good,
    };
    for (g, field) in [
        (ge(0.0, 1.0, 1.0, 1.0), "loss_good"),
        (ge(0.1, 0.5, 1.0, 1.0), "loss_good"),
        (ge(0.1, 0.0, 1.0, 0.0), "loss_bad"),
    ] {
        let mut cfg = reno_path();
        cfg.links[1].forward.gilbert_elliott = Some(g);
        refused(
            &cfg,
            &format!("links.1.forward.gilbert_elliott.{field}: with p = "),
        );
    }
    for g in [
        ge(0.1, 0.5, 1.0, 0.5),
        ge(0.1, 0.0, 0.5, 1.0),
        ge(0.0, 0.0, 1.0, 0.9),
    ] {
        let mut cfg = reno_path();
        cfg.links[1].forward.gilbert_elliott = Some(g);
        cfg.validate().unwrap();
    }
}

#[test]
fn an_fq_codel_memory_limit_holds_a_packet_as_a_byte_buffer_must() {
    let mut cfg = reno_path();
    let fq = |memory_limit_bytes| {
        Discipline::FqCodel(FqCodelConfig {
            memory_limit_bytes,
            ..FqCodelConfig::default()
        })
    };
    cfg.links[1].forward.discipline = fq(1500);
    cfg.validate().unwrap();
    cfg.links[1].forward.discipline = fq(1499);
    refused(
        &cfg,
        "links.1.forward.discipline.memory_limit_bytes: 1499 bytes hold no full-size packet (1500 \
         bytes",
    );
}

fn swarm() -> SimConfig {
    let mut cfg = reno_path();
    cfg.nodes.clear();
    cfg.links.clear();
    cfg.flows.clear();
    cfg.duration_ns = 4000 * SEC;
    cfg.swarm = Some(SwarmConfig::default());
    cfg
}

#[test]
fn swarm_counts_of_connections_stay_within_max_connections() {
    for field in ["min_peers", "max_initiate", "unchoke_slots"] {
        let mut cfg = swarm();
        let b = &mut cfg.swarm.as_mut().unwrap().bittorrent;
        b.max_connections = 20;
        match field {
            "min_peers" => b.min_peers = 21,
            "max_initiate" => b.max_initiate = 21,
            _ => b.unchoke_slots = 21,
        }
        refused(
            &cfg,
            &format!("swarm.bittorrent.{field}: must not exceed swarm.bittorrent.max_connections (20), got 21"),
        );
    }
}

/// A sample every nanosecond of a 4 000 s swarm is 4 x 10^12 samples: no finer than the queue
/// table keeps over the run.
#[test]
fn a_swarm_samples_its_queues_no_finer_than_the_trace_keeps() {
    let mut cfg = swarm();
    cfg.swarm.as_mut().unwrap().queue_sample_ns = 1;
    refused(
        &cfg,
        "swarm.queue_sample: 1 ns is 4000000000000 samples in a 4000 s run",
    );
    cfg.swarm.as_mut().unwrap().queue_sample_ns = 2 * MS;
    cfg.validate().unwrap();
    cfg.trace.max_rows = 1_000_000;
    refused(&cfg, "swarm.queue_sample: 2000000 ns is 2000000 samples");
}

/// 10 Gbps of 28-byte packets for a minute is 2.7 x 10^9 packets: refused before the run with
/// the estimate; stopped after 20 s, or on a tenth of the time, it is in bounds.
#[test]
fn a_cross_source_sends_a_bounded_number_of_packets() {
    let mut cfg = reno_path();
    let mut c = cross(10_000_000_000);
    c.packet_bytes = 28;
    cfg.cross = vec![c.clone()];
    refused(
        &cfg,
        "cross.0.rate: sends about 2678571428 packets of 28 bytes in the run",
    );
    cfg.cross[0].stop_ns = Some(20 * SEC);
    cfg.validate().unwrap();
    c.kind = "onoff".into();
    (c.on_ns, c.off_ns) = (Some(MS), Some(9 * MS));
    cfg.cross = vec![c];
    cfg.validate().unwrap();
}

/// Each of 100 sources sends 1/50 of the bound, 2 x 10^7 packets (1 500 bytes at 4 Gbps for a
/// minute): in bounds one by one, twice the bound together; 50 of them are at it exactly.
#[test]
fn the_cross_sources_together_send_a_bounded_number_of_packets() {
    let mut cfg = reno_path();
    cfg.duration_ns = 60 * SEC;
    let c = cross(4_000_000_000);
    let each = 60 * 4_000_000_000 / (8 * 1500);
    assert_eq!(each * 50, slowstart_config::MAX_CROSS_PACKETS);
    cfg.cross = vec![c.clone(); 50];
    cfg.validate().unwrap();
    cfg.cross = vec![c; 100];
    refused(
        &cfg,
        "cross: the 100 sources send about 2000000000 packets in the run together, more than \
         1000000000",
    );
}

/// A trace's times read the same from a list and from the string of them Python's loader
/// writes; a token that is not an integer is refused naming the field and the token.
#[test]
fn trace_times_read_from_a_list_or_a_string_of_them() {
    let mut cfg = serde_json::to_value(reno_path()).unwrap();
    let forward = &mut cfg["links"][0]["forward"];
    forward["rate_trace_ms"] = serde_json::json!([0, 0, 1, 5, 5, 20]);
    let listed = SimConfig::from_json(&cfg.to_string()).unwrap();
    let forward = &mut cfg["links"][0]["forward"];
    forward["rate_trace_ms"] = serde_json::json!("0 0\n1 5\t5   20");
    let spaced = SimConfig::from_json(&cfg.to_string()).unwrap();
    assert_eq!(listed.links[0].forward.rate_trace_ms, [0, 0, 1, 5, 5, 20]);
    assert_eq!(spaced.links[0].forward.rate_trace_ms, [0, 0, 1, 5, 5, 20]);

    cfg["links"][0]["forward"]["rate_trace_ms"] = serde_json::json!("0 1 1.5 2");
    let e = SimConfig::from_json(&cfg.to_string()).unwrap_err().0;
    assert_eq!(
        e,
        "links.0.forward.rate_trace_ms: time 2: expected an integer (ms), got \"1.5\""
    );
}
