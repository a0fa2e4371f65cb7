//! Nodes, duplex links split into two channels, and static shortest-path routes.

use std::collections::VecDeque;

use crate::config::SimConfig;
use crate::network::channel::Channel;
use crate::SimError;

pub struct Topology {
    pub node_names: Vec<String>,
    pub channels: Vec<Channel>,
    /// `next_hop[node * n + dst]` = channel to take from `node` towards `dst` (u32::MAX: none).
    next_hop: Vec<u32>,
}

/// Seed for component `index` of kind `salt`: SplitMix64 of the scenario seed, so every
/// component has its own random stream.
pub fn substream_seed(seed: u64, salt: u64, index: u64) -> u64 {
    let mut z =
        seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Topology {
    pub fn build(cfg: &SimConfig) -> Result<Self, SimError> {
        let n = cfg.nodes.len();
        let index = |name: &str| cfg.nodes.iter().position(|x| x == name).unwrap() as u32;
        let mut channels = Vec::with_capacity(2 * cfg.links.len());
        // adjacency: (from node, channel)
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
        for l in &cfg.links {
            let (a, b) = (index(&l.a), index(&l.b));
            for (from, to, dir, suffix) in [(a, b, &l.forward, ""), (b, a, &l.reverse, ":reverse")]
            {
                let id = channels.len() as u32;
                let seed = substream_seed(cfg.seed, 1, id as u64);
                channels.push(Channel::new(format!("{}{suffix}", l.name), to, dir, seed));
                out[from as usize].push(id);
            }
        }
        // Breadth-first search from every node: fewest hops, ties to the lowest channel index.
        let mut next_hop = vec![u32::MAX; n * n];
        for src in 0..n {
            let mut first: Vec<u32> = vec![u32::MAX; n];
            let mut seen = vec![false; n];
            seen[src] = true;
            let mut frontier = VecDeque::from([src]);
            while let Some(u) = frontier.pop_front() {
                for &c in &out[u] {
                    let v = channels[c as usize].to_node as usize;
                    if !seen[v] {
                        seen[v] = true;
                        first[v] = if u == src { c } else { first[u] };
                        frontier.push_back(v);
                    }
                }
            }
            next_hop[src * n..(src + 1) * n].copy_from_slice(&first);
        }
        let topo = Topology {
            node_names: cfg.nodes.clone(),
            channels,
            next_hop,
        };
        for (i, f) in cfg.flows.iter().enumerate() {
            let (s, d) = (index(&f.src), index(&f.dst));
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
        self.node_names.iter().position(|x| x == name).unwrap() as u32
    }

    pub fn next_hop(&self, from: u32, to: u32) -> Option<u32> {
        let n = self.node_names.len();
        let c = self.next_hop[from as usize * n + to as usize];
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
