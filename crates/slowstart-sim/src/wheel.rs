//! A hierarchical timing wheel (Varghese and Lauck, "Hashed and hierarchical timing wheels:
//! data structures for the efficient implementation of a timer facility", SOSP 1987) as an
//! event [`Queue`]: the cost of a push or a pop does not grow with the entries pending, where
//! [`CalendarQueue`](crate::engine::CalendarQueue) keeps entries beyond its ring's reach in a
//! heap (issue #37).
//!
//! Times are split into digits of `LEVEL_BITS` above the lowest `SLOT_SHIFT` bits; level
//! `k` has a slot per value of digit `k`. An entry goes to the level of the highest digit where
//! its time differs from `now` (the last pop's time, or the start of the slot being emptied),
//! at the slot of its own digit there; an entry whose digits all equal `now`'s goes to level 0.
//! So every entry of level `k` shares `now`'s digits above `k` and has a larger digit `k`
//! (level 0: one at least as large), and the first busy slot of the lowest busy level holds
//! the least entry. A pop takes it from level 0; when level 0 is empty, it moves `now` to the
//! start of the lowest busy level's first busy slot and puts that slot's entries on lower
//! levels (a cascade), at most once per level an entry crosses. A slot of level 0 holds
//! 2^`SLOT_SHIFT` ns of times, unordered: a pop scans it for the least (time, insertion)
//! key, so entries pop in exactly [`EventQueue`](crate::engine::EventQueue)'s order.
//!
//! The swarm's queue ([`SwarmQueue`](crate::swarm::engine::SwarmQueue)): against the calendar,
//! fewer instructions and first-level misses an event in swarms of 100 to 30 000 peers
//! (bench/README.md, "The event queue").

use crate::engine::{next_key, time_of, Nodes, Queue, NIL};

/// Level 0's slots are 2^10 ns (about 1 us) wide. 2^13 took 2-3% fewer instructions an event
/// in swarms of 100 and 3 000 peers, and up to one more first-level miss (bench/README.md).
const SLOT_SHIFT: u32 = 10;
/// Each level has 2^8 slots: a bitmap of four words says which hold entries.
const LEVEL_BITS: u32 = 8;
const SLOTS: usize = 1 << LEVEL_BITS;
const WORDS: usize = SLOTS / 64;
/// Enough levels for every u64 time: 10 + 7 * 8 >= 64.
const LEVELS: usize = (64 - SLOT_SHIFT).div_ceil(LEVEL_BITS) as usize;

/// The pending events, popped in (time, insertion) order, as from the engine's other queues;
/// `E` is the simulation's event type. See the module's doc.
pub struct WheelQueue<E> {
    /// Each slot's first node, level by level.
    heads: Box<[[u32; SLOTS]; LEVELS]>,
    /// Bit `s` of level `k`: slot `s` of level `k` holds entries.
    busy: [[u64; WORDS]; LEVELS],
    /// Bit `k`: level `k` holds entries.
    busy_levels: u32,
    /// Every entry is at this time or later; see the module's doc.
    now: u64,
    nodes: Nodes<E>,
    len: usize,
    inserted: u64,
}

impl<E> Default for WheelQueue<E> {
    fn default() -> Self {
        Self {
            heads: Box::new([[NIL; SLOTS]; LEVELS]),
            busy: [[0; WORDS]; LEVELS],
            busy_levels: 0,
            now: 0,
            nodes: Nodes::default(),
            len: 0,
            inserted: 0,
        }
    }
}

/// The lowest bit of digit `level`.
#[inline(always)]
fn digit_shift(level: usize) -> u32 {
    SLOT_SHIFT + LEVEL_BITS * level as u32
}

/// Digit `level` of `time`: its slot on that level.
#[inline(always)]
fn digit(time: u64, level: usize) -> usize {
    (time >> digit_shift(level)) as usize & (SLOTS - 1)
}

/// The first slot from `from` on whose bit is set in `bits`.
#[inline(always)]
fn first_busy(bits: &[u64; WORDS], from: usize) -> Option<usize> {
    let (w, bit) = (from / 64, from % 64);
    let here = bits[w] & (u64::MAX << bit);
    if here != 0 {
        return Some(w * 64 + here.trailing_zeros() as usize);
    }
    (w + 1..WORDS).find_map(|i| (bits[i] != 0).then(|| i * 64 + bits[i].trailing_zeros() as usize))
}

impl<E: Copy> WheelQueue<E> {
    /// The level and slot of an entry at `time`, relative to `now`.
    #[inline(always)]
    fn place(&self, time: u64) -> (usize, usize) {
        let differ = (time ^ self.now) >> SLOT_SHIFT;
        let level = if differ == 0 {
            0
        } else {
            ((63 - differ.leading_zeros()) / LEVEL_BITS) as usize
        };
        (level, digit(time, level))
    }

    /// Schedule `event` at `time`, which must not be earlier than the last pop's.
    #[inline]
    pub fn push(&mut self, time: u64, event: E) {
        debug_assert!(time >= self.now, "scheduled before the last pop");
        let key = next_key(time, &mut self.inserted);
        let n = self.nodes.take(key, event);
        let (level, slot) = self.place(time);
        self.link(level, slot, n);
        self.len += 1;
    }

    /// Put node `n` at the head of slot `slot` of level `level`.
    #[inline(always)]
    fn link(&mut self, level: usize, slot: usize, n: u32) {
        self.nodes[n as usize].next = self.heads[level][slot];
        self.heads[level][slot] = n;
        self.busy[level][slot / 64] |= 1 << (slot % 64);
        self.busy_levels |= 1 << level;
    }

    /// Mark slot `slot` of level `level` empty.
    #[inline(always)]
    fn clear(&mut self, level: usize, slot: usize) {
        self.busy[level][slot / 64] &= !(1 << (slot % 64));
        if self.busy[level] == [0; WORDS] {
            self.busy_levels &= !(1 << level);
        }
    }

    /// Level 0 is empty: move `now` to the start of the lowest busy level's first busy slot
    /// and spread that slot's entries over the levels below.
    #[cold]
    fn cascade(&mut self) {
        let level = self.busy_levels.trailing_zeros() as usize;
        let slot = first_busy(&self.busy[level], digit(self.now, level))
            .expect("a busy level has a busy slot at or after now's digit");
        let shift = digit_shift(level);
        let above = shift + LEVEL_BITS;
        let kept = if above >= 64 {
            0
        } else {
            self.now >> above << above
        };
        self.now = kept | (slot as u64) << shift;
        let mut n = std::mem::replace(&mut self.heads[level][slot], NIL);
        self.clear(level, slot);
        while n != NIL {
            let next = self.nodes[n as usize].next;
            let (l, s) = self.place(time_of(self.nodes[n as usize].key));
            debug_assert!(l < level);
            self.link(l, s, n);
            n = next;
        }
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        while self.busy_levels & 1 == 0 {
            if self.busy_levels == 0 {
                return None;
            }
            self.cascade();
        }
        let slot = first_busy(&self.busy[0], digit(self.now, 0))
            .expect("level 0's entries are at or after now's slot");
        let (key, event) = self.nodes.take_least(&mut self.heads[0][slot]);
        if self.heads[0][slot] == NIL {
            self.clear(0, slot);
        }
        self.len -= 1;
        self.now = time_of(key);
        Some((self.now, event))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<E: Copy> Queue<E> for WheelQueue<E> {
    #[inline(always)]
    fn push(&mut self, time: u64, event: E) {
        WheelQueue::push(self, time, event)
    }

    /// The same as [`WheelQueue::push`]: one structure holds every kind of event.
    #[inline(always)]
    fn push_link(&mut self, time: u64, event: E) {
        WheelQueue::push(self, time, event)
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<(u64, E)> {
        WheelQueue::pop(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Event, EventQueue};

    /// The wheel and the flows' heaps, fed the same pushes and pops, pop the same entries.
    fn same_pops(ops: &[(u8, u64, bool)]) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut wheel = WheelQueue::<Event<u32>>::default();
        let mut heaps = EventQueue::<Event<u32>>::default();
        let mut now = 0u64;
        for (n, &(scale, dt, pop)) in ops.iter().enumerate() {
            if pop {
                let got = wheel.pop();
                proptest::prop_assert_eq!(got, heaps.pop());
                if let Some((t, _)) = got {
                    now = t;
                }
            } else {
                // Never before the last pop, as in a simulation: the same time, nanoseconds, a
                // level-0 slot, a few levels up, and to the end of time.
                let t = match scale {
                    0 => now,
                    1 => now.saturating_add(dt),
                    2 => now.saturating_add(dt << SLOT_SHIFT),
                    3 => now.saturating_add(dt << 30),
                    _ => u64::MAX - dt.min(u64::MAX - now),
                };
                wheel.push(t, Event::App(n as u32));
                heaps.push(t, Event::App(n as u32));
            }
            proptest::prop_assert_eq!(wheel.len(), heaps.len());
        }
        while let Some(got) = wheel.pop() {
            proptest::prop_assert_eq!(Some(got), heaps.pop());
        }
        proptest::prop_assert!(heaps.is_empty());
        Ok(())
    }

    proptest::proptest! {
        /// Random pushes and pops interleaved: equal times, times within a slot, across levels
        /// and near u64::MAX pop in the heaps' (time, insertion) order.
        #[test]
        fn pops_as_the_heaps_do(
            ops in proptest::collection::vec((0u8..5, 0u64..2000, proptest::bool::ANY), 1..500),
        ) {
            same_pops(&ops)?;
        }
    }

    #[test]
    fn the_end_of_time_and_equal_times() {
        let mut q = WheelQueue::<u32>::default();
        q.push(u64::MAX, 0);
        q.push(5, 1);
        q.push(u64::MAX, 2);
        q.push(5, 3);
        q.push(1 << 63, 4);
        assert_eq!(q.pop(), Some((5, 1)));
        assert_eq!(q.pop(), Some((5, 3)));
        q.push(5, 5);
        assert_eq!(q.pop(), Some((5, 5)));
        assert_eq!(q.pop(), Some((1 << 63, 4)));
        q.push(u64::MAX, 6);
        assert_eq!(q.pop(), Some((u64::MAX, 0)));
        assert_eq!(q.pop(), Some((u64::MAX, 2)));
        assert_eq!(q.pop(), Some((u64::MAX, 6)));
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
    }

    /// Tens of thousands pending over seconds, as a large swarm keeps them (link heads within
    /// milliseconds, timers seconds ahead): the heaps' order throughout.
    #[test]
    fn many_entries_pop_as_the_heaps_do() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(37);
        let mut wheel = WheelQueue::<Event<u32>>::default();
        let mut heaps = EventQueue::<Event<u32>>::default();
        let mut now = 0u64;
        for n in 0..400_000u32 {
            if n < 200_000 || n % 3 != 0 {
                let ahead = if rng.random_bool(0.8) {
                    rng.random_range(0..20_000_000)
                } else {
                    rng.random_range(0..20_000_000_000)
                };
                wheel.push(now + ahead, Event::App(n));
                heaps.push(now + ahead, Event::App(n));
            }
            if n % 2 == 0 {
                let got = wheel.pop();
                assert_eq!(got, heaps.pop());
                now = got.expect("entries pending").0;
            }
        }
        while let Some(got) = wheel.pop() {
            assert_eq!(Some(got), heaps.pop());
        }
        assert!(heaps.is_empty());
    }
}
