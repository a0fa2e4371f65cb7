//! Overrides: `--cc`, `--set KEY=VALUE` (a dotted path through the scenario's tables, as the
//! core lists their keys), `--seed` and `--duration`, applied to a raw scenario.

use std::sync::OnceLock;

use super::apps::APP_KINDS;
use super::cc::read_cc;
use super::tables::{defaults, field_at, key_names, keys};
use super::toml_text::set_value;
use super::units::err;
use super::value::{show, V};
use super::Host;
use crate::SimError;

/// The override schema: every table's keys.
enum Schema {
    Value,
    Table(Vec<(&'static str, Schema)>),
    /// A list of tables.
    List(Box<Schema>),
    /// An algorithm: `KEY.cc.PARAM=VALUE` edits its parameters, starting from the default of
    /// the named table where the scenario gives none.
    Cc(&'static str),
}

fn table_of(names: Vec<&'static str>) -> Vec<(&'static str, Schema)> {
    names.into_iter().map(|k| (k, Schema::Value)).collect()
}

fn with(
    mut t: Vec<(&'static str, Schema)>,
    key: &'static str,
    s: Schema,
) -> Vec<(&'static str, Schema)> {
    match t.iter_mut().find(|(k, _)| *k == key) {
        Some((_, old)) => *old = s,
        None => t.push((key, s)),
    }
    t
}

fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let drops = || Schema::List(Box::new(Schema::Table(table_of(keys("drop")))));
        let mut app_keys: Vec<&'static str> = Vec::new();
        for kind in APP_KINDS {
            for k in keys(&format!("app.{kind}")) {
                if !app_keys.contains(&k) {
                    app_keys.push(k);
                }
            }
        }
        let flow = with(
            with(
                with(table_of(keys("flow")), "cc", Schema::Cc("flow")),
                "app",
                Schema::Table(table_of(app_keys)),
            ),
            "program",
            Schema::Table(table_of(keys("program"))),
        );
        let transport = |kind: &'static str| {
            Schema::Table(with(
                table_of(keys("swarm.transport")),
                "cc",
                Schema::Cc(kind),
            ))
        };
        let swarm = with(
            with(
                with(
                    table_of(keys("swarm")),
                    "bittorrent",
                    Schema::Table(table_of(keys("swarm.bittorrent"))),
                ),
                "tcp",
                transport("swarm.tcp"),
            ),
            "utp",
            transport("swarm.utp"),
        );
        let top = with(
            with(
                with(
                    with(
                        with(
                            with(
                                table_of(keys("top")),
                                "path",
                                Schema::Table(with(table_of(keys("path")), "drop", drops())),
                            ),
                            "link",
                            Schema::List(Box::new(Schema::Table(with(
                                table_of(keys("link")),
                                "drop",
                                drops(),
                            )))),
                        ),
                        "flow",
                        Schema::List(Box::new(Schema::Table(flow))),
                    ),
                    "cross",
                    Schema::List(Box::new(Schema::Table(table_of(keys("cross"))))),
                ),
                "trace",
                Schema::Table(table_of(keys("trace"))),
            ),
            "swarm",
            Schema::Table(swarm),
        );
        Schema::Table(top)
    })
}

/// Tables `--set` may add where the scenario has none.
fn creatable(key: &str) -> bool {
    ["trace", "app", "program"].contains(&key) || key_names("swarm_tables").contains(&key)
}

fn is_index(head: &str) -> bool {
    !head.is_empty() && head.bytes().all(|b| b.is_ascii_digit())
}

#[allow(clippy::too_many_arguments)]
fn set_in(
    node: &mut V,
    parts: &[&str],
    value: &V,
    schema: &Schema,
    done: &str,
    item: &str,
    host: &mut dyn Host,
) -> Result<(), SimError> {
    let (head, rest) = (parts[0], &parts[1..]);
    let here = field_at(done, head);
    if let Schema::List(inner) = schema {
        let V::List(list) = node else {
            return Err(err(format!(
                "--set {item}: {done} is not a list in this scenario"
            )));
        };
        let indices: Vec<usize> = if head == "*" {
            (0..list.len()).collect()
        } else if is_index(head) && head.parse::<usize>().is_ok_and(|i| i < list.len()) {
            vec![head.parse().expect("an index")]
        } else {
            let named: Vec<usize> = (0..list.len())
                .filter(|&i| list[i].get("name") == Some(&V::str(head)))
                .collect();
            if named.is_empty() {
                if let Schema::Table(keys) = inner.as_ref() {
                    if keys.iter().any(|(k, _)| *k == head) {
                        let tail = parts.join(".");
                        return Err(err(format!(
                            "--set {item}: {done} is a list of tables; give {done}.0.{tail} \
                             (the first) or {done}.*.{tail} (every one)"
                        )));
                    }
                }
                return Err(err(format!(
                    "--set {item}: no {here} (the scenario has {} {done} entries, indexed \
                     from 0)",
                    list.len()
                )));
            }
            named
        };
        for i in indices {
            if rest.is_empty() {
                list[i] = value.clone();
            } else {
                set_in(
                    &mut list[i],
                    rest,
                    value,
                    inner,
                    &field_at(done, &i.to_string()),
                    item,
                    host,
                )?;
            }
        }
        return Ok(());
    }
    let Schema::Table(keys) = schema else {
        unreachable!("a value has no keys below it")
    };
    if !node.is_table() {
        return Err(err(format!(
            "--set {item}: {done} is not a table in this scenario"
        )));
    }
    let Some((_, child)) = keys.iter().find(|(k, _)| *k == head) else {
        let accepted: Vec<&str> = keys.iter().map(|(k, _)| *k).collect();
        let at = if done.is_empty() {
            "the scenario"
        } else {
            done
        };
        return Err(err(format!(
            "--set {item}: unknown key {} in {at} (accepted: {})",
            show(&V::str(head)),
            accepted.join(", ")
        )));
    };
    if rest.is_empty() {
        node.set(head, value.clone());
        return Ok(());
    }
    match child {
        Schema::Cc(table) => {
            let current = match node.get(head) {
                Some(v) => v.clone(),
                None => defaults(table).get("cc").cloned().expect("a default cc"),
            };
            let spec = read_cc(&current, &here, host)?;
            if rest.len() != 1 {
                return Err(err(format!("--set {item}: expected {here}.PARAM=VALUE")));
            }
            let mut t = vec![("name".to_string(), V::Str(spec.name))];
            t.extend(spec.params);
            let mut cc = V::Table(t);
            cc.set(rest[0], value.clone());
            node.set(head, cc);
            Ok(())
        }
        Schema::Value => Err(err(format!("--set {item}: {here} is a value, not a table"))),
        Schema::Table(_) | Schema::List(_) => {
            if !node.has(head) {
                if !creatable(head) {
                    return Err(err(format!("--set {item}: the scenario has no {here}")));
                }
                let empty = if matches!(child, Schema::Table(_)) {
                    V::table()
                } else {
                    V::List(vec![])
                };
                node.set(head, empty);
            }
            let below = node.get_mut(head).expect("just set");
            set_in(below, rest, value, child, &here, item, host)
        }
    }
}

/// One `KEY=VALUE` override, KEY a dotted path such as `flow.0.mss` or `path.rate`.
pub fn apply_set(raw: &mut V, item: &str, host: &mut dyn Host) -> Result<(), SimError> {
    let (key, text) = match item.split_once('=') {
        Some((k, t)) => (super::value::py_strip(k), t),
        None => ("", ""),
    };
    if key.is_empty() {
        return Err(err(format!(
            "--set {item}: expected KEY=VALUE such as flow.0.mss=8960"
        )));
    }
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(err(format!(
            "--set {item}: empty part in the key {}",
            show(&V::str(key))
        )));
    }
    let value = set_value(text);
    if parts[0] == "app" {
        // `app.N.KEY` addresses flow N's application, and messages name it so (`app.0.foo`).
        if parts.len() < 2 {
            return Err(err(format!(
                "--set {item}: expected app.N.KEY=VALUE, N a flow index"
            )));
        }
        let count = match raw.get("flow") {
            Some(V::List(l)) => l.len(),
            _ => 0,
        };
        let index = parts[1]
            .parse::<usize>()
            .ok()
            .filter(|_| is_index(parts[1]));
        let Some(index) = index.filter(|i| *i < count) else {
            return Err(err(format!(
                "--set {item}: no app.{} (N in app.N is a flow's index from 0; [[flow]] tables \
                 in the scenario: {count})",
                parts[1]
            )));
        };
        let Some(V::List(flows)) = raw.get_mut("flow") else {
            unreachable!("counted above")
        };
        let flow = &mut flows[index];
        if flow.is_table() && parts.len() > 2 {
            if !flow.has("app") {
                flow.set("app", V::table());
            }
            if let Some(V::Str(kind)) = flow.get("app") {
                let kind = kind.clone();
                flow.set("app", V::Table(vec![("kind".into(), V::Str(kind))]));
            }
            let Schema::Table(top) = schema() else {
                unreachable!()
            };
            let flow_schema = top.iter().find(|(k, _)| *k == "flow").map(|(_, s)| s);
            let Some(Schema::List(flow_schema)) = flow_schema else {
                unreachable!()
            };
            let Schema::Table(flow_keys) = flow_schema.as_ref() else {
                unreachable!()
            };
            let app_schema = &flow_keys.iter().find(|(k, _)| *k == "app").expect("app").1;
            let app = flow.get_mut("app").expect("just set");
            return set_in(
                app,
                &parts[2..],
                &value,
                app_schema,
                &format!("app.{index}"),
                item,
                host,
            );
        }
        let mut rewritten = vec!["flow", parts[1], "app"];
        rewritten.extend(&parts[2..]);
        return set_in(raw, &rewritten, &value, schema(), "", item, host);
    }
    set_in(raw, &parts, &value, schema(), "", item, host)
}

/// What a caller overrides, as `slowstart.load`'s keywords: `cc` (every flow's), `set`
/// (`KEY=VALUE` items, a list or one string), `seed`, `duration`.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub cc: Option<V>,
    pub set: Option<V>,
    pub seed: Option<V>,
    pub duration: Option<V>,
}

/// Apply `cc` (every flow), then each `set` item, then `seed` and `duration`. In place.
pub fn apply_overrides(raw: &mut V, o: &Overrides, host: &mut dyn Host) -> Result<(), SimError> {
    if o.cc.is_some() && raw.has("swarm") {
        return Err(err(
            "--cc: a swarm has no [[flow]] tables; set swarm.tcp.cc or swarm.utp.cc instead".into(),
        ));
    }
    if let (Some(cc), Some(V::List(flows))) = (&o.cc, raw.get_mut("flow")) {
        for flow in flows.iter_mut().filter(|f| f.is_table()) {
            flow.set("cc", cc.clone());
        }
    }
    let items: Vec<String> = match &o.set {
        None => vec![],
        Some(V::Str(one)) => vec![one.clone()],
        Some(V::List(list)) if list.iter().all(|i| matches!(i, V::Str(_))) => list
            .iter()
            .map(|i| i.as_str().unwrap_or_default().to_string())
            .collect(),
        Some(other) => {
            return Err(err(format!(
                "set: expected a list of \"key=value\" strings such as \
                 [\"flow.0.initcwnd=20\"], got {}",
                show(other)
            )))
        }
    };
    for item in &items {
        apply_set(raw, item, host)?;
    }
    if let Some(seed) = &o.seed {
        raw.set("seed", seed.clone());
    }
    if let Some(duration) = &o.duration {
        raw.set("duration", duration.clone());
    }
    Ok(())
}
