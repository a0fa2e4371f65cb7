//! The choking algorithm of the ns-2 module (Eger et al.; BitTorrent 4.x): every rechoke
//! interval, unchoke the interested neighbours with the best rates in all slots but one, and
//! give the last slot to an optimistic unchoke drawn at random, new connections weighted
//! (`opt_unchoke_prob = 3`), moved every optimistic interval. A peer with no more interested
//! neighbours than slots unchokes them all. Sans-IO: the caller measures the rates (leechers:
//! bytes received from the neighbour over the rate window; seeds: bytes sent to it).

use rand::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub conn: u32,
    pub interested: bool,
    /// Bytes over the rate window, in the direction that ranks (see the module doc).
    pub rate: u64,
    /// Anti-snubbing: sent us nothing for a minute although it unchoked us; regular slots skip it.
    pub snubbed: bool,
    /// Weight in the optimistic draw.
    pub weight: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Connections to unchoke (all others are choked), the optimistic one included.
    pub unchoke: Vec<u32>,
    pub optimistic: Option<u32>,
}

/// One rechoke over `cands` with `slots` upload slots. `optimistic` is the current optimistic
/// unchoke; it is kept unless `redraw` (the optimistic interval has come) or it is no longer
/// eligible.
pub fn rechoke(
    cands: &[Candidate],
    slots: usize,
    optimistic: Option<u32>,
    redraw: bool,
    rng: &mut impl Rng,
) -> Choice {
    let interested: Vec<&Candidate> = cands.iter().filter(|c| c.interested).collect();
    if interested.len() <= slots {
        return Choice {
            unchoke: interested.iter().map(|c| c.conn).collect(),
            optimistic: None,
        };
    }
    // Best rates first; a random order beneath the stable sort breaks ties fairly.
    let mut ranked: Vec<&Candidate> = interested.iter().copied().filter(|c| !c.snubbed).collect();
    for i in (1..ranked.len()).rev() {
        ranked.swap(i, rng.random_range(0..=i));
    }
    ranked.sort_by_key(|c| std::cmp::Reverse(c.rate));
    let mut unchoke: Vec<u32> = ranked
        .iter()
        .take(slots.saturating_sub(1))
        .map(|c| c.conn)
        .collect();
    let others: Vec<&Candidate> = interested
        .iter()
        .copied()
        .filter(|c| !unchoke.contains(&c.conn))
        .collect();
    let keep = optimistic.filter(|o| !redraw && others.iter().any(|c| c.conn == *o));
    let chosen = keep.or_else(|| {
        let total: u64 = others.iter().map(|c| c.weight.max(1)).sum();
        if total == 0 {
            return None;
        }
        let mut x = rng.random_range(0..total);
        others.iter().find_map(|c| {
            let w = c.weight.max(1);
            if x < w {
                Some(c.conn)
            } else {
                x -= w;
                None
            }
        })
    });
    // Fill what is left (few unsnubbed peers) with the next interested ones.
    if let Some(o) = chosen {
        unchoke.push(o);
    }
    for c in &others {
        if unchoke.len() >= slots {
            break;
        }
        if !unchoke.contains(&c.conn) {
            unchoke.push(c.conn);
        }
    }
    Choice {
        unchoke,
        optimistic: chosen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn cand(conn: u32, rate: u64) -> Candidate {
        Candidate {
            conn,
            interested: true,
            rate,
            snubbed: false,
            weight: 1,
        }
    }

    #[test]
    fn few_interested_are_all_unchoked() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut cands = vec![cand(1, 0), cand(2, 5), cand(3, 9), cand(4, 1)];
        cands.push(Candidate {
            interested: false,
            ..cand(5, 100)
        });
        let c = rechoke(&cands, 4, None, true, &mut rng);
        assert_eq!(c.unchoke, vec![1, 2, 3, 4]);
        assert_eq!(c.optimistic, None);
    }

    #[test]
    fn best_rates_take_the_regular_slots_and_one_more_is_optimistic() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let cands: Vec<_> = (0..10).map(|i| cand(i, i as u64 * 10)).collect();
        let c = rechoke(&cands, 4, None, true, &mut rng);
        assert_eq!(&c.unchoke[..3], &[9, 8, 7]);
        assert_eq!(c.unchoke.len(), 4);
        let o = c.optimistic.unwrap();
        assert!(o < 7 && c.unchoke[3] == o);
        // Kept at the next rechoke unless redrawn.
        let again = rechoke(&cands, 4, Some(o), false, &mut rng);
        assert_eq!(again.optimistic, Some(o));
    }

    #[test]
    fn new_connections_are_three_times_as_likely_to_be_drawn() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        // Three regular slots go to 100..102; peers 0 (new, weight 3) and 1, 2 (weight 1).
        let mut cands = vec![cand(100, 50), cand(101, 50), cand(102, 50)];
        cands.push(Candidate {
            weight: 3,
            ..cand(0, 0)
        });
        cands.push(cand(1, 0));
        cands.push(cand(2, 0));
        let draws = 10_000;
        let new = (0..draws)
            .filter(|_| rechoke(&cands, 4, None, true, &mut rng).optimistic == Some(0))
            .count();
        // Expected 3/5 of the draws; binomial sd is under 0.005.
        let share = new as f64 / draws as f64;
        assert!((share - 0.6).abs() < 0.02, "{share}");
    }

    #[test]
    fn snubbed_peers_get_no_regular_slot() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        let mut cands: Vec<_> = (0..6).map(|i| cand(i, 10)).collect();
        cands[0].rate = 1000;
        cands[0].snubbed = true;
        for _ in 0..50 {
            let c = rechoke(&cands, 4, None, true, &mut rng);
            assert!(!c.unchoke[..3].contains(&0));
        }
    }
}
