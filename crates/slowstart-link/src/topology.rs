//! Nodes, duplex links split into two channels, and static shortest-path routes.

use std::collections::{HashMap, VecDeque};

use crate::channel::Channel;
use slowstart_config::SimError;
use slowstart_config::{substream_seed, SeedStream, SimConfig};

pub struct Topology {
    pub node_names: Vec<String>,
    pub channels: Vec<Channel>,
    /// Node index by name.
    index: HashMap<String, u32>,
    /// Column of each node as a destination in `next_hop` (u32::MAX: no route ends there).
    dest_column: Vec<u32>,
    columns: usize,
    /// `next_hop[node * columns + dest_column[dst]]` = channel to take from `node` towards `dst`
    /// (u32::MAX: none). Only the destinations of flows and cross traffic have a column, so
    /// memory grows with nodes x destinations, not nodes squared.
    next_hop: Vec<u32>,
}

impl Topology {
    pub fn build(cfg: &SimConfig) -> Result<Self, SimError> {
        let n = cfg.nodes.len();
        let index: HashMap<String, u32> = cfg
            .nodes
            .iter()
            .enumerate()
            .map(|(i, name)| (name.clone(), i as u32))
            .collect();
        let mut channels = Vec::with_capacity(2 * cfg.links.len());
        // adjacency: channels out of each node, and into it
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut into: Vec<Vec<u32>> = vec![Vec::new(); n];
        for l in &cfg.links {
            let (a, b) = (index[&l.a], index[&l.b]);
            for (from, to, dir, suffix) in [(a, b, &l.forward, ""), (b, a, &l.reverse, ":reverse")]
            {
                let id = channels.len() as u32;
                let seed = substream_seed(cfg.seed, SeedStream::Channel, id as u64);
                channels.push(Channel::new(format!("{}{suffix}", l.name), to, dir, seed));
                out[from as usize].push(id);
                into[to as usize].push(from);
            }
        }
        // Every node a packet is ever addressed to: both ends of a flow, a cross source's sink.
        let mut dest_column = vec![u32::MAX; n];
        let mut dests = Vec::new();
        let ends = cfg.flows.iter().flat_map(|f| [&f.src, &f.dst]);
        for name in ends.chain(cfg.cross.iter().map(|c| &c.dst)) {
            let d = index[name] as usize;
            if dest_column[d] == u32::MAX {
                dest_column[d] = dests.len() as u32;
                dests.push(d);
            }
        }
        let columns = dests.len();
        let mut next_hop = vec![u32::MAX; n * columns];
        // Fewest hops, ties to the lowest channel index: what a breadth-first search from each
        // node finds first. From a node at distance k from `dst`, that is its first channel
        // (in index order) to a node at distance k - 1, so one search back from each
        // destination gives every node's next hop towards it.
        let mut distance = vec![u32::MAX; n];
        let mut frontier = VecDeque::new();
        for (column, &dst) in dests.iter().enumerate() {
            distance.fill(u32::MAX);
            distance[dst] = 0;
            frontier.push_back(dst);
            while let Some(v) = frontier.pop_front() {
                for &u in &into[v] {
                    if distance[u as usize] == u32::MAX {
                        distance[u as usize] = distance[v] + 1;
                        frontier.push_back(u as usize);
                    }
                }
            }
            for node in 0..n {
                let k = distance[node];
                if k == 0 || k == u32::MAX {
                    continue;
                }
                next_hop[node * columns + column] = out[node]
                    .iter()
                    .copied()
                    .find(|&c| distance[channels[c as usize].to_node as usize] == k - 1)
                    .expect("a node at distance k has a channel to one at k - 1");
            }
        }
        let topo = Topology {
            node_names: cfg.nodes.clone(),
            channels,
            index,
            dest_column,
            columns,
            next_hop,
        };
        for (i, f) in cfg.flows.iter().enumerate() {
            let (s, d) = (topo.node(&f.src), topo.node(&f.dst));
            if topo.next_hop(s, d).is_none() || topo.next_hop(d, s).is_none() {
                return Err(SimError(format!(
                    "flow.{i}: no route between '{}' and '{}' in both directions",
                    f.src, f.dst
                )));
            }
        }
        Ok(topo)
    }

    pub fn node(&self, name: &str) -> u32 {
        self.index[name]
    }

    /// The channel from `from` towards `to`, a flow's end or a cross source's sink.
    pub fn next_hop(&self, from: u32, to: u32) -> Option<u32> {
        let column = self.dest_column[to as usize] as usize;
        let c = self.next_hop[from as usize * self.columns + column];
        (c != u32::MAX).then_some(c)
    }

    /// Channels from `from` to `to`, in order.
    pub fn route(&self, from: u32, to: u32) -> Vec<u32> {
        let mut hops = Vec::new();
        let mut at = from;
        while at != to {
            match self.next_hop(at, to) {
                Some(c) => {
                    hops.push(c);
                    at = self.channels[c as usize].to_node;
                }
                None => break,
            }
        }
        hops
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slowstart_config::{DirectionConfig, FlowConfig, LinkConfig, QueueLimit};

    /// The first channel of the path a breadth-first search from `from` finds to `to`,
    /// exploring channels in index order: the rule routes follow.
    fn searched_from(out: &[Vec<(u32, usize)>], from: usize, to: usize) -> Option<u32> {
        let mut first = vec![None; out.len()];
        let mut seen = vec![false; out.len()];
        seen[from] = true;
        let mut frontier = VecDeque::from([from]);
        while let Some(u) = frontier.pop_front() {
            for &(c, v) in &out[u] {
                if !seen[v] {
                    seen[v] = true;
                    first[v] = if u == from { Some(c) } else { first[u] };
                    frontier.push_back(v);
                }
            }
        }
        first[to]
    }

    /// A 4 x 4 grid, its many shortest paths tied, and a link between two corners.
    #[test]
    fn the_search_back_from_each_destination_picks_what_a_search_from_each_node_picks() {
        let name = |i: usize| format!("n{i}");
        let mut links = Vec::new();
        let mut pairs = Vec::new();
        for i in 0..16 {
            if i % 4 != 3 {
                pairs.push((i, i + 1));
            }
            if i < 12 {
                pairs.push((i, i + 4));
            }
        }
        pairs.push((15, 0));
        for (k, &(a, b)) in pairs.iter().enumerate() {
            let dir = DirectionConfig::lossless(1_000_000, 1, QueueLimit::Packets(10));
            links.push(LinkConfig {
                name: format!("l{k}"),
                a: name(a),
                b: name(b),
                forward: dir.clone(),
                reverse: dir,
            });
        }
        let mut cfg = slowstart_config::testing::path(1, 1, QueueLimit::Packets(1), vec![], vec![]);
        cfg.nodes = (0..16).map(name).collect();
        cfg.links = links;
        cfg.flows = vec![FlowConfig::new("n0", "n15"), FlowConfig::new("n5", "n10")];
        let topo = Topology::build(&cfg).unwrap();
        let mut out = vec![Vec::new(); 16];
        for (c, ch) in topo.channels.iter().enumerate() {
            let from = if c % 2 == 0 {
                pairs[c / 2].0
            } else {
                pairs[c / 2].1
            };
            out[from].push((c as u32, ch.to_node as usize));
        }
        for dst in [0, 15, 5, 10] {
            for node in 0..16 {
                let want = if node == dst {
                    None
                } else {
                    searched_from(&out, node, dst)
                };
                assert_eq!(
                    topo.next_hop(node as u32, dst as u32),
                    want,
                    "{node} to {dst}"
                );
            }
        }
    }
}
