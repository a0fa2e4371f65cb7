//! The event queue: a binary heap of (time, insertion counter, event). The counter breaks ties
//! first-in first-out, so same-time events run in a fixed order and runs are deterministic.
//! Links keep their own in-flight packets and put only their head here, so the heap stays small
//! (one entry per busy link direction and per armed timer) however many packets are in flight.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use slowstart_transport::TimerKind;

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
}
