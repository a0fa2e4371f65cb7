//! The event queue: a binary heap of (time, insertion counter, event). The counter breaks ties
//! first-in first-out, so same-time events run in a fixed order and runs are deterministic.
//! Links keep their own in-flight packets and put only their head here, so the heap stays small
//! (one entry per busy link direction and per armed timer) however many packets are in flight.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happens when an event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// The head packet of a link direction (channel) reaches the far node.
    ChannelHead(u32),
    /// A flow's application starts.
    FlowStart(u32),
    /// A flow's timer may be due.
    Timer(u32, TimerKind),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TimerKind {
    Retransmission,
    /// RFC 8985 §7 tail loss probe.
    LossProbe,
    DelayedAck,
    Pacing,
    /// The request stream's retransmission timer.
    Request,
    /// The application's own clock (BitTorrent's once-a-second tick).
    App,
}

/// A heap entry ordered by one integer: time in the high 64 bits, insertion counter below.
#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// The heap of pending events; `E` is the simulation's event type ([`Event`] for flows, the
/// swarm's own for swarms).
pub struct EventQueue<E = Event> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    inserted: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            inserted: 0,
        }
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn push(&mut self, time: u64, event: E) {
        let key = (time as u128) << 64 | self.inserted as u128;
        self.heap.push(Reverse(Entry { key, event }));
        self.inserted += 1;
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.heap
            .pop()
            .map(|Reverse(e)| ((e.key >> 64) as u64, e.event))
    }

    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse(e)| (e.key >> 64) as u64)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// A timer whose deadline can move often without churning the heap: the heap holds at most the
/// earliest time it was armed for; a wake-up that finds the deadline moved later re-arms.
#[derive(Clone, Copy, Debug)]
pub struct Timer {
    deadline: Option<u64>,
    /// Earliest time a heap entry for this timer is pending (u64::MAX when none).
    armed_at: u64,
}

impl Default for Timer {
    fn default() -> Self {
        Self {
            deadline: None,
            armed_at: u64::MAX,
        }
    }
}

impl Timer {
    pub fn deadline(&self) -> Option<u64> {
        self.deadline
    }

    /// Set or clear the deadline; returns a time to push into the heap if one is needed.
    #[must_use]
    pub fn set(&mut self, deadline: Option<u64>) -> Option<u64> {
        self.deadline = deadline;
        match deadline {
            Some(d) if d < self.armed_at => {
                self.armed_at = d;
                Some(d)
            }
            _ => None,
        }
    }

    /// A heap entry for this timer fired at `now`: true if the deadline is due (and clears it).
    pub fn fire(&mut self, now: u64) -> bool {
        if self.armed_at == now {
            self.armed_at = u64::MAX;
        }
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                true
            }
            _ => false,
        }
    }

    /// After a wake-up that was not due, the time to re-arm at, if any.
    #[must_use]
    pub fn rearm(&mut self) -> Option<u64> {
        self.set(self.deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, Event::FlowStart(2));
        q.push(5, Event::FlowStart(0));
        q.push(3, Event::FlowStart(9));
        q.push(5, Event::FlowStart(1));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::FlowStart(9)),
                (5, Event::FlowStart(2)),
                (5, Event::FlowStart(0)),
                (5, Event::FlowStart(1))
            ]
        );
    }

    #[test]
    fn moving_a_deadline_later_does_not_push_again() {
        let mut t = Timer::default();
        assert_eq!(t.set(Some(100)), Some(100));
        assert_eq!(
            t.set(Some(200)),
            None,
            "later deadline waits for the pending wake-up"
        );
        assert!(!t.fire(100), "not due yet");
        assert_eq!(t.rearm(), Some(200));
        assert!(t.fire(200));
        assert_eq!(t.deadline(), None);
        // An earlier deadline does push.
        assert_eq!(t.set(Some(300)), Some(300));
        assert_eq!(t.set(Some(250)), Some(250));
    }
}
