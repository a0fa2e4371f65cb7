//! The network of a scenario: the `[path]` shorthand (sender, access link, router, bottleneck,
//! receiver) or `nodes` and `[[link]]` tables → the canonical nodes and links; and a core
//! message about a link's canonical field named back as the scenario wrote it.

use super::queues::{
    parameter_key, parse_gilbert_elliott, parse_queue, parse_rate_or_trace, Trace,
};
use super::tables::{
    check_table, defaults, fallback, field_at, key_table, keys, over, parse_str, require,
};
use super::units::{
    err, parse_bool, parse_buffer, parse_int, parse_loss, parse_rate, parse_time, resolve_buffer,
    Bdp, INT,
};
use super::value::{show, V};
use super::Host;
use crate::SimError;

pub const PATH_NODES: [&str; 3] = ["sender", "router", "receiver"];

/// One direction of a link; the optional fields are written only when used, so drop-tail
/// scenarios keep their canonical form.
#[derive(Default)]
struct Direction {
    rate_bps: u64,
    delay_ns: u64,
    queue: V,
    loss: Option<V>,
    jitter_ns: u64,
    drops: Vec<V>,
    discipline: Option<V>,
    ecn: bool,
    trace: Option<Trace>,
}

impl Direction {
    fn into_v(self) -> V {
        let mut d = V::Table(vec![
            ("rate_bps".into(), V::Int(self.rate_bps.into())),
            ("delay_ns".into(), V::Int(self.delay_ns.into())),
            ("queue".into(), self.queue),
            ("loss".into(), V::Float(0.0)),
            ("jitter_ns".into(), V::Int(self.jitter_ns.into())),
            ("drops".into(), V::List(self.drops)),
        ]);
        match self.loss {
            Some(V::Table(ge)) => d.set("gilbert_elliott", V::Table(ge)),
            Some(p) => d.set("loss", p),
            None => {}
        }
        if let Some(trace) = self.trace {
            d.set("rate_trace_ms", V::Str(trace.times));
        }
        if let Some(discipline) = self.discipline {
            d.set("discipline", discipline);
        }
        if self.ecn {
            d.set("ecn", V::Bool(true));
        }
        d
    }
}

/// `loss = 0.01` (independent) or `loss = {p = ..., r = ...}` (Gilbert-Elliott).
fn loss(value: &V, field: &str) -> Result<V, SimError> {
    if value.is_table() {
        return parse_gilbert_elliott(value, field);
    }
    Ok(V::Float(parse_loss(value, field)?))
}

/// (forward discipline, reverse discipline, ecn) of a `[path]` or `[[link]]` table.
fn queues(table: &V, at: &str) -> Result<(Option<V>, Option<V>, bool), SimError> {
    let droptail = V::str("droptail");
    let forward = parse_queue(
        table.get("queue").unwrap_or(&droptail),
        &format!("{at}.queue"),
    )?;
    let reverse = match table.get("reverse_queue") {
        Some(q) => parse_queue(q, &format!("{at}.reverse_queue"))?,
        None => forward.clone(),
    };
    let ecn = parse_bool(
        table.get("ecn").unwrap_or(&V::Bool(false)),
        &format!("{at}.ecn"),
    )?;
    Ok((forward, reverse, ecn))
}

/// Scheduled drops; which flows and segments exist is the core's to check.
fn drops(value: &V, field: &str) -> Result<Vec<V>, SimError> {
    let V::List(items) = value else {
        return Err(err(format!(
            "{field}: expected a list of {{flow = N, seq = N}}, got {}",
            show(value)
        )));
    };
    let mut out = Vec::new();
    for (j, item) in items.iter().enumerate() {
        let at = field_at(field, &j.to_string());
        check_table(item, &at, &keys("drop"))?;
        let flow = parse_int(
            require(item, &at, "flow", "a flow index")?,
            &format!("{at}.flow"),
            INT,
        )?;
        let seq = require(item, &at, "seq", "a data segment number")?;
        let seq = parse_int(seq, &format!("{at}.seq"), "a positive integer")?;
        out.push(V::Table(vec![
            ("flow".into(), V::Int(flow.into())),
            ("seq".into(), V::Int(seq.into())),
        ]));
    }
    Ok(out)
}

pub fn queue_limit(value: &V, field: &str, rate_bps: u64, bdp: Option<Bdp>) -> Result<V, SimError> {
    resolve_buffer(parse_buffer(value, field)?, field, value, rate_bps, bdp)
}

/// `[path]` → sender —access— router —bottleneck— receiver.
pub fn expand_path(path: &V, host: &mut dyn Host) -> Result<(Vec<String>, Vec<V>), SimError> {
    let p = over(defaults("path"), check_table(path, "path", &keys("path"))?);
    let (rate, trace) = parse_rate_or_trace(
        require(&p, "path", "rate", "a rate such as \"250Mbps\"")?,
        "path.rate",
        host,
    )?;
    let rtt = parse_time(
        require(&p, "path", "rtt", "a time such as \"80ms\"")?,
        "path.rtt",
    )?;
    if rtt == 0 {
        // The core sees only the two one-way delays, and 0 is a valid delay.
        return Err(err("path.rtt: must be positive, got 0".into()));
    }
    let bdp = Some(Bdp {
        rate_bps: rate,
        rtt_ns: rtt,
    });
    let (reverse_value, reverse_field) = fallback("path", &p, "reverse_rate", "path");
    let (reverse_rate, reverse_trace) = parse_rate_or_trace(reverse_value, &reverse_field, host)?;
    let forward_queue = queue_limit(
        &p.get("buffer").cloned().unwrap_or(V::Null),
        "path.buffer",
        rate,
        bdp,
    )?;
    let (reverse_buffer, reverse_field) = fallback("path", &p, "reverse_buffer", "path");
    let reverse_queue = queue_limit(reverse_buffer, &reverse_field, reverse_rate, bdp)?;
    let access_rate = parse_rate(p.get("access_rate").unwrap_or(&V::Null), "path.access_rate")?;
    let access_queue = defaults("path_access_queue");
    let (discipline, reverse_discipline, ecn) = queues(&p, "path")?;
    let forward = Direction {
        rate_bps: rate,
        delay_ns: rtt / 2,
        queue: forward_queue,
        loss: Some(loss(p.get("loss").unwrap_or(&V::Null), "path.loss")?),
        jitter_ns: parse_time(p.get("jitter").unwrap_or(&V::Null), "path.jitter")?,
        drops: drops(p.get("drop").unwrap_or(&V::List(vec![])), "path.drop")?,
        discipline,
        ecn,
        trace,
    };
    let access = |queue: V| Direction {
        rate_bps: access_rate,
        queue,
        ..Direction::default()
    };
    let links = vec![
        V::Table(vec![
            ("name".into(), V::str("access")),
            ("a".into(), V::str("sender")),
            ("b".into(), V::str("router")),
            ("forward".into(), access(access_queue.clone()).into_v()),
            ("reverse".into(), access(access_queue).into_v()),
        ]),
        V::Table(vec![
            ("name".into(), V::str("bottleneck")),
            ("a".into(), V::str("router")),
            ("b".into(), V::str("receiver")),
            ("forward".into(), forward.into_v()),
            (
                "reverse".into(),
                Direction {
                    rate_bps: reverse_rate,
                    delay_ns: rtt - rtt / 2,
                    queue: reverse_queue,
                    discipline: reverse_discipline,
                    ecn,
                    trace: reverse_trace,
                    ..Direction::default()
                }
                .into_v(),
            ),
        ]),
    ];
    Ok((PATH_NODES.iter().map(|n| n.to_string()).collect(), links))
}

fn node_names(value: &V) -> Result<Vec<String>, SimError> {
    let refuse = || {
        err(format!(
            "nodes: expected a list of node names such as [\"a\", \"b\"], got {}",
            show(value)
        ))
    };
    let V::List(items) = value else {
        return Err(refuse());
    };
    if items.is_empty() {
        return Err(refuse());
    }
    let mut nodes: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, name) in items.iter().enumerate() {
        let name = parse_str(name, &format!("nodes.{i}"))?;
        if !seen.insert(name.clone()) {
            return Err(err(format!(
                "nodes.{i}: {} is listed twice",
                show(&V::Str(name))
            )));
        }
        nodes.push(name);
    }
    if nodes.len() < 2 {
        return Err(err("nodes: at least two nodes are needed".into()));
    }
    Ok(nodes)
}

/// Node names for a message: the first few of many.
pub fn node_list(nodes: &[String]) -> String {
    let shown = nodes[..nodes.len().min(8)].join(", ");
    if nodes.len() > 8 {
        format!("{shown}, and {} more", nodes.len() - 8)
    } else {
        shown
    }
}

pub fn node_ref(value: &V, field: &str, nodes: &[String]) -> Result<String, SimError> {
    match value {
        V::Str(s) if nodes.contains(s) => Ok(s.clone()),
        _ => Err(err(format!(
            "{field}: unknown node {} (nodes: {})",
            show(value),
            node_list(nodes)
        ))),
    }
}

/// The general form: `nodes = [...]` and `[[link]]` tables.
pub fn expand_links(raw: &V, host: &mut dyn Host) -> Result<(Vec<String>, Vec<V>), SimError> {
    let nodes = node_names(require(raw, "", "nodes", "a list of node names")?)?;
    let items = require(raw, "", "link", "[[link]] tables")?;
    let list = match items {
        V::List(l) if !l.is_empty() => l,
        _ => {
            return Err(err(format!(
                "link: expected one or more [[link]] tables, got {}",
                show(items)
            )))
        }
    };
    let mut links = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (i, item) in list.iter().enumerate() {
        let at = format!("link.{i}");
        check_table(item, &at, &keys("link"))?;
        let a = node_ref(
            require(item, &at, "a", "a node name")?,
            &format!("{at}.a"),
            &nodes,
        )?;
        let b = node_ref(
            require(item, &at, "b", "a node name")?,
            &format!("{at}.b"),
            &nodes,
        )?;
        if a == b {
            return Err(err(format!(
                "{at}.b: a link needs two different nodes, got {} twice",
                show(&V::Str(b))
            )));
        }
        let default_name = V::Str(format!("{a}-{b}"));
        let name = parse_str(
            item.get("name").unwrap_or(&default_name),
            &format!("{at}.name"),
        )?;
        if !names.insert(name.clone()) {
            return Err(err(format!(
                "{at}.name: {} is used by another link",
                show(&V::Str(name))
            )));
        }
        let (rate, trace) = parse_rate_or_trace(
            require(item, &at, "rate", "a rate such as \"1Gbps\"")?,
            &format!("{at}.rate"),
            host,
        )?;
        let delay = parse_time(
            require(item, &at, "delay", "a one-way delay such as \"10ms\"")?,
            &format!("{at}.delay"),
        )?;
        let buffer = require(
            item,
            &at,
            "buffer",
            "a buffer such as \"200pkt\", \"1MB\" or \"50ms\"",
        )?;
        let (reverse_value, reverse_field) = fallback("link", item, "reverse_rate", &at);
        let (reverse_rate, reverse_trace) =
            parse_rate_or_trace(reverse_value, &reverse_field, host)?;
        let (delay_value, delay_field) = fallback("link", item, "reverse_delay", &at);
        let reverse_delay = parse_time(delay_value, &delay_field)?;
        let (reverse_buffer, reverse_buffer_field) = fallback("link", item, "reverse_buffer", &at);
        let (discipline, reverse_discipline, ecn) = queues(item, &at)?;
        let forward = Direction {
            rate_bps: rate,
            delay_ns: delay,
            queue: queue_limit(buffer, &format!("{at}.buffer"), rate, None)?,
            loss: Some(loss(
                item.get("loss").unwrap_or(&V::Int(0)),
                &format!("{at}.loss"),
            )?),
            jitter_ns: parse_time(
                item.get("jitter").unwrap_or(&V::Int(0)),
                &format!("{at}.jitter"),
            )?,
            drops: drops(
                item.get("drop").unwrap_or(&V::List(vec![])),
                &format!("{at}.drop"),
            )?,
            discipline,
            ecn,
            trace,
        };
        let reverse = Direction {
            rate_bps: reverse_rate,
            delay_ns: reverse_delay,
            queue: queue_limit(reverse_buffer, &reverse_buffer_field, reverse_rate, None)?,
            discipline: reverse_discipline,
            ecn,
            trace: reverse_trace,
            ..Direction::default()
        };
        links.push(V::Table(vec![
            ("name".into(), V::Str(name)),
            ("a".into(), V::Str(a)),
            ("b".into(), V::Str(b)),
            ("forward".into(), forward.into_v()),
            ("reverse".into(), reverse.into_v()),
        ]));
    }
    Ok((nodes, links))
}

/// The core's message with a link's canonical field named as the scenario wrote it: the core
/// says `links.1.forward.queue`, a `[path]` scenario `path.buffer`, the general form
/// `link.1.buffer`, the key that fills the field (keys.rs).
pub fn scenario_field(message: &str, path: bool) -> String {
    let Some((field, why)) = message.split_once(": ") else {
        return message.to_string();
    };
    let Some(rest) = field.strip_prefix("links.") else {
        return message.to_string();
    };
    let Some((index, below)) = rest.split_once('.') else {
        return message.to_string();
    };
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) || below.is_empty() {
        return message.to_string();
    }
    let (table, at, canonical) = if path {
        ("path", "path".to_string(), field)
    } else {
        ("link", format!("link.{index}"), below)
    };
    for k in key_table(table) {
        for (name, part) in &k.fields {
            let Some(rest) = canonical.strip_prefix(name.as_str()) else {
                continue;
            };
            if !rest.is_empty() && !rest.starts_with('.') {
                continue;
            }
            let mut rest = rest.to_string();
            if k.unit == "queue" && !rest.is_empty() {
                // A discipline's parameter, as the scenario names it.
                let inner = &rest[1..];
                let (name, deeper) = inner
                    .split_once('.')
                    .map_or((inner, None), |(a, b)| (a, Some(b)));
                rest = match deeper {
                    Some(d) => format!(".{}.{d}", parameter_key(name)),
                    None => format!(".{}", parameter_key(name)),
                };
            }
            let part = if part.is_empty() {
                String::new()
            } else {
                format!(".{part}")
            };
            return format!("{at}.{}{part}{rest}: {why}", k.key);
        }
    }
    message.to_string()
}
