//! The tracker: the active peers, and an announce's answer drawn from them without copying
//! the list (issue #37: at 100 000 peers a copy per announce is quadratic in the swarm).

use rand::Rng;

/// The active peers in ascending id order: peers join with the next id and leave in any order,
/// so the list stays sorted and a peer is found by binary search.
#[derive(Debug, Default)]
pub struct Tracker {
    active: Vec<u32>,
}

impl Tracker {
    /// Peer `p` joins; its id is above every id the tracker ever held.
    pub fn join(&mut self, p: u32) {
        debug_assert!(self.active.last().is_none_or(|&q| q < p), "ids ascend");
        self.active.push(p);
    }

    pub fn leave(&mut self, p: u32) {
        if let Ok(i) = self.active.binary_search(&p) {
            self.active.remove(i);
        }
    }

    pub fn len(&self) -> usize {
        self.active.len()
    }

    pub fn is_empty(&self) -> bool {
        self.active.is_empty()
    }

    /// Up to `k` distinct active peers other than `p`, drawn at random: a partial Fisher-Yates
    /// shuffle of the list without `p`, as if on a copy of it, drawing from `rng` exactly as
    /// that copy's shuffle would (one `random_range(i..len)` per pick). Only the positions it
    /// swapped are kept (at most `2k`), so an answer costs O(k log n), not O(n).
    pub fn draw(&self, p: u32, k: usize, rng: &mut impl Rng) -> Vec<u32> {
        let skip = self.active.binary_search(&p).ok();
        let len = self.active.len() - usize::from(skip.is_some());
        // Entry `i` of the list without `p`.
        let others = |i: usize| self.active[i + usize::from(skip.is_some_and(|s| i >= s))];
        // Positions the shuffle moved, with what now lies there.
        let mut moved: Vec<(usize, u32)> = Vec::with_capacity(2 * k);
        let at = |moved: &[(usize, u32)], i: usize| {
            moved
                .iter()
                .rev()
                .find(|&&(j, _)| j == i)
                .map_or_else(|| others(i), |&(_, q)| q)
        };
        let k = k.min(len);
        let mut drawn = Vec::with_capacity(k);
        for i in 0..k {
            let j = rng.random_range(i..len);
            let (here, there) = (at(&moved, i), at(&moved, j));
            drawn.push(there);
            // Position i is never read again (later picks draw from i + 1 on).
            moved.push((j, here));
        }
        drawn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// The shuffle on a copy, as the swarm drew before the tracker kept no copy.
    fn draw_on_copy(active: &[u32], p: u32, k: usize, rng: &mut impl Rng) -> Vec<u32> {
        let mut pool: Vec<u32> = active.iter().copied().filter(|&x| x != p).collect();
        let k = k.min(pool.len());
        for i in 0..k {
            let j = rng.random_range(i..pool.len());
            pool.swap(i, j);
        }
        pool.truncate(k);
        pool
    }

    proptest::proptest! {
        /// Same peers in the same order, and the generator left in the same state, as the
        /// shuffle of a copy: whether or not `p` is listed, with `k` below, at and above the
        /// number of others.
        #[test]
        fn draws_as_the_shuffle_of_a_copy(
            ids in proptest::collection::btree_set(0u32..200, 0..60),
            p in 0u32..200,
            k in 0usize..70,
            seed in proptest::num::u64::ANY,
        ) {
            let mut tracker = Tracker::default();
            for &id in &ids {
                tracker.join(id);
            }
            let active: Vec<u32> = ids.iter().copied().collect();
            let mut a = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut b = a.clone();
            proptest::prop_assert_eq!(tracker.draw(p, k, &mut a), draw_on_copy(&active, p, k, &mut b));
            proptest::prop_assert_eq!(a.random::<u64>(), b.random::<u64>());
        }
    }

    #[test]
    fn a_peer_that_left_is_not_drawn() {
        let mut tracker = Tracker::default();
        for id in 0..5 {
            tracker.join(id);
        }
        tracker.leave(2);
        tracker.leave(7); // never joined: nothing changes
        assert_eq!(tracker.len(), 4);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut drawn = tracker.draw(0, 10, &mut rng);
        drawn.sort();
        assert_eq!(drawn, vec![1, 3, 4]);
    }
}
