//! A set of disjoint half-open `[start, end)` ranges, merged on insert. Used for the receiver's
//! out-of-order data and the sender's SACKed segments; inserting reports only the newly covered
//! parts, so re-reported SACK blocks cost a binary search, not their length.
//!
//! The ranges sit sorted in one deque: a connection rarely has more than a few holes, new data
//! lands at the top end and the cumulative ACK trims the bottom, so inserts and trims move
//! little, and a thousand flows' sets stay in cache better than a tree's nodes.

use std::collections::VecDeque;

/// Free an empty deque's storage: an idle connection keeps no buffer its busy time grew
/// (issue #37). The next push allocates again; what the deque holds is never changed.
pub fn release_if_empty<T>(deque: &mut VecDeque<T>) {
    if deque.is_empty() && deque.capacity() > 0 {
        *deque = VecDeque::new();
    }
}

/// Bytes of storage a deque holds, empty or not.
pub fn held_bytes<T>(deque: &VecDeque<T>) -> usize {
    deque.capacity() * std::mem::size_of::<T>()
}

#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    /// Sorted by start; disjoint and non-adjacent.
    ranges: VecDeque<(u64, u64)>,
}

impl RangeSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Free the storage of an empty set (nothing it reports changes).
    pub fn release_if_empty(&mut self) {
        release_if_empty(&mut self.ranges);
    }

    /// Bytes of storage it holds, empty or not.
    pub fn buffer_bytes(&self) -> usize {
        held_bytes(&self.ranges)
    }

    /// How many ranges start at or below `x`.
    fn starting_at_or_below(&self, x: u64) -> usize {
        self.ranges.partition_point(|&(s, _)| s <= x)
    }

    /// Add `[start, end)`, calling `newly(a, b)` for each part not covered before, in order.
    pub fn insert(&mut self, start: u64, end: u64, mut newly: impl FnMut(u64, u64)) {
        if start >= end {
            return;
        }
        let i = self.starting_at_or_below(start);
        // The merged range begins at `first`: the range reaching `start`, if any.
        let (first, lo, mut cursor) = match i.checked_sub(1).map(|k| (k, self.ranges[k])) {
            Some((_, (_, e))) if e >= end => return,
            Some((k, (s, e))) if e >= start => (k, s, e),
            _ => (i, start, start),
        };
        let mut hi = end;
        let mut next = i;
        while let Some(&(s, e)) = self.ranges.get(next) {
            if s > end {
                break;
            }
            if s > cursor {
                newly(cursor, s);
            }
            cursor = cursor.max(e);
            hi = hi.max(e);
            next += 1;
        }
        if cursor < end {
            newly(cursor, end);
        }
        if first == next {
            self.ranges.insert(first, (lo, hi));
        } else {
            self.ranges[first] = (lo, hi);
            self.ranges.drain(first + 1..next);
        }
    }

    /// Remove everything below `point`.
    pub fn remove_below(&mut self, point: u64) {
        while let Some(&(s, e)) = self.ranges.front() {
            if s >= point {
                break;
            }
            if e > point {
                self.ranges[0] = (point, e);
                break;
            }
            self.ranges.pop_front();
        }
    }

    /// The range containing `x`, if any.
    pub fn containing(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.starting_at_or_below(x);
        let (s, e) = self.ranges.get(i.checked_sub(1)?).copied()?;
        (e > x).then_some((s, e))
    }

    /// The first range, if any.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.ranges.front().copied()
    }

    /// The `n`-th highest covered unit, counting from 1 (units are the integers in the ranges).
    #[inline]
    pub fn nth_highest(&self, n: u64) -> Option<u64> {
        if self.ranges.is_empty() {
            return None;
        }
        let mut left = n;
        for &(s, e) in self.ranges.iter().rev() {
            let width = e - s;
            if width >= left {
                return Some(e - left);
            }
            left -= width;
        }
        None
    }

    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn only_an_empty_set_gives_its_storage_back() {
        let mut set = RangeSet::new();
        insert(&mut set, 10, 20);
        insert(&mut set, 30, 40);
        set.release_if_empty();
        assert_eq!(set.len(), 2);
        assert!(set.ranges.capacity() >= 2);
        set.remove_below(50);
        set.release_if_empty();
        assert!(set.is_empty() && set.ranges.capacity() == 0);
        assert_eq!(insert(&mut set, 5, 8), [(5, 8)]);
    }

    fn insert(set: &mut RangeSet, s: u64, e: u64) -> Vec<(u64, u64)> {
        let mut new = Vec::new();
        set.insert(s, e, |a, b| new.push((a, b)));
        new
    }

    #[test]
    fn reports_only_new_coverage_and_merges() {
        let mut r = RangeSet::new();
        assert_eq!(insert(&mut r, 10, 20), vec![(10, 20)]);
        assert_eq!(insert(&mut r, 30, 40), vec![(30, 40)]);
        assert_eq!(insert(&mut r, 15, 35), vec![(20, 30)]);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(10, 40)]);
        assert_eq!(insert(&mut r, 12, 38), vec![]);
        assert_eq!(insert(&mut r, 40, 41), vec![(40, 41)]);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(10, 41)]);
    }

    #[test]
    fn nth_highest_counts_across_ranges() {
        let mut r = RangeSet::new();
        insert(&mut r, 5, 6);
        insert(&mut r, 10, 12);
        assert_eq!(r.nth_highest(1), Some(11));
        assert_eq!(r.nth_highest(2), Some(10));
        assert_eq!(r.nth_highest(3), Some(5));
        assert_eq!(r.nth_highest(4), None);
    }

    #[test]
    fn remove_below_trims_a_straddling_range() {
        let mut r = RangeSet::new();
        insert(&mut r, 5, 10);
        insert(&mut r, 20, 30);
        r.remove_below(25);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(25, 30)]);
        assert_eq!(r.containing(27), Some((25, 30)));
        assert_eq!(r.containing(30), None);
    }

    proptest! {
        #[test]
        fn matches_a_bitmap(ops in proptest::collection::vec((0u64..200, 1u64..30), 1..60)) {
            let mut r = RangeSet::new();
            let mut bits = [false; 256];
            for (s, w) in ops {
                let e = s + w;
                let mut newly = 0;
                r.insert(s, e, |a, b| {
                    for x in a..b {
                        assert!(!bits[x as usize], "reported {x} twice");
                        newly += 1;
                    }
                });
                let expected = (s..e).filter(|&x| !bits[x as usize]).count();
                prop_assert_eq!(newly, expected);
                for x in s..e {
                    bits[x as usize] = true;
                }
                // Disjoint, non-adjacent, sorted.
                let v: Vec<_> = r.iter().collect();
                for pair in v.windows(2) {
                    prop_assert!(pair[0].1 < pair[1].0);
                }
                let covered: usize = v.iter().map(|(a, b)| (b - a) as usize).sum();
                prop_assert_eq!(covered, bits.iter().filter(|b| **b).count());
            }
        }
    }
}
