//! The one event loop of every simulation, and its event queues.
//!
//! [`advance_with`] is the loop: pop the next (time, event), stop past the duration, count it,
//! hand it out, flush what it produced, then stop on a user's controller's fault, when the
//! application is done, or when [`crate::Progress`] says so. [`Engine`] is what the loop
//! owns: the clock, the event counter, the [`Queue`] and the transport's [`Io`] (packets to
//! send). What a run simulates is an [`Application`] of it: the flows with
//! their applications, cross traffic and metrics ([`crate::sim::Simulation`]), or a BitTorrent
//! swarm of peers that connect and leave ([`crate::swarm::SwarmSim`]). The loop handles three
//! kinds of [`Event`] itself and calls the application back for what only it knows:
//! - a link direction's head ([`Event::ChannelHead`]): the engine takes the packet off the
//!   channel and schedules the next head; the application routes the packet
//!   ([`Application::on_channel_head`]) and offers it to its next channel through the engine
//!   ([`Engine::offer`]), which schedules the head of a channel that was idle;
//! - a session's deadline ([`Event::Wake`]): the application hands the time to the session
//!   (a flow's [`slowstart_transport::Session::handle_timeout`], which fires every timer of its
//!   connection and application that is due) and acts on what it did
//!   ([`Application::on_wake`]);
//! - the application's own events ([`Event::App`]: a flow's start, a peer's arrival or
//!   rechoke ...), to [`Application::on_event`].
//!
//! A session has one entry in the queue, however many timers it has: once an event has left a
//! session's deadline earlier than its entry, the application pushes a new one
//! ([`Engine::wake`], with the time `Session::wake_at` or a [`slowstart_transport::Wake`]
//! names). After the event the engine hands each packet sent to [`Application::send`], which
//! puts it on its first link. A loop over sockets (the UDP stack) reads the same deadline,
//! `poll_timeout`, instead. The loop is generic, not `dyn`: each application and queue kind
//! gets its own compiled copy, with the callbacks inlined.
//!
//! The queue: pending (time, insertion counter, event) entries, popped in that order. The
//! counter breaks ties first-in first-out, so same-time events run in a fixed order and runs are
//! deterministic. Links keep their own in-flight packets and put only their head here, so the
//! queue stays small (one entry per busy link direction and per session with a deadline)
//! however many packets are in flight. Its kind is a type parameter of the application
//! ([`Queue`]): flows use [`EventQueue`] by default, swarms the timing wheel
//! ([`crate::wheel::WheelQueue`]), whose cost does not grow with the thousands of entries a
//! large swarm keeps pending; [`CalendarQueue`] was the swarms' before it. All pop in the same
//! order, so any gives the same results.
//!
//! In [`EventQueue`], two 4-ary min-heaps hold the entries: one for link heads, which are most
//! events, and one for everything else (timers, arrivals), which is most entries: a thousand
//! flows keep thousands of timers pending and a few links. A pop compares the two tops and
//! sifts only in the heap it took from, so the frequent events pay for the depth of a small
//! heap. Keys and events are kept apart and a node has four children: a sift compares four
//! adjacent keys per level over half the levels of a binary heap (issue #14; LaMarca and
//! Ladner, "The influence of caches on the performance of heaps", 1996).

use slowstart_link::channel::{Channel, Offer};
use slowstart_transport::packet::Packet;
use slowstart_transport::Io;

use crate::{Progress, SwarmStatus, Tick, PROGRESS_EVERY};

/// What happens when an event fires; `X` is the application's own events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event<X> {
    /// The head packet of a link direction (channel) reaches the far node.
    ChannelHead(u32),
    /// Session `id`'s deadline may have come.
    Wake(u32),
    /// The application's own event.
    App(X),
}

/// The pending events, popped in (time, insertion) order: [`EventQueue`] or [`CalendarQueue`].
pub trait Queue<E>: Default {
    /// Schedule a timer or any event other than a link's head.
    fn push(&mut self, time: u64, event: E);
    /// Schedule a link head. The order of events does not depend on which push was used.
    fn push_link(&mut self, time: u64, event: E);
    fn pop(&mut self) -> Option<(u64, E)>;
}

/// What the loop owns: the clock, the event count, the queue and the endpoints' [`Io`].
pub struct Engine<Q> {
    /// The time of the event being handled, ns.
    pub now: u64,
    /// Events handled so far.
    pub events: u64,
    /// Events after this time are not handled, ns.
    pub duration_ns: u64,
    pub queue: Q,
    /// What endpoints produced during the current event; flushed after it.
    pub io: Io,
    /// Some endpoint runs a user's controller: the loop checks for its faults after every event.
    pub guests: bool,
    /// The run was stopped before its end (Ctrl-C, or a user's controller faulted).
    pub interrupted: bool,
    /// What a user's controller did wrong, when that stopped the run.
    pub fault: Option<String>,
}

impl<Q: Default> Engine<Q> {
    pub fn new(duration_ns: u64, guests: bool) -> Self {
        Self {
            now: 0,
            events: 0,
            duration_ns,
            queue: Q::default(),
            io: Io::default(),
            guests,
            interrupted: false,
            fault: None,
        }
    }
}

impl<Q> Engine<Q> {
    /// Wake session `id` at `at`, if a time is named (see the module's doc).
    #[inline(always)]
    pub fn wake<X>(&mut self, id: u32, at: Option<u64>)
    where
        Q: Queue<Event<X>>,
    {
        if let Some(t) = at {
            self.queue.push(t, Event::Wake(id));
        }
    }

    /// Offer `packet` to channel `c` now; if it queued on an idle channel, schedule the
    /// channel's head (the channel's next head after that is scheduled by the loop, when it
    /// takes this one). False if the channel dropped it.
    #[inline(always)]
    pub fn offer<X>(&mut self, c: u32, channel: &mut Channel, packet: Packet, mss: u64) -> bool
    where
        Q: Queue<Event<X>>,
    {
        match channel.offer(self.now, packet, mss) {
            Offer::Queued { was_idle } => {
                if was_idle {
                    let t = channel.head_time().expect("just queued");
                    self.queue.push_link(t, Event::ChannelHead(c));
                }
                true
            }
            _ => false,
        }
    }
}

/// A simulation the [`Engine`] runs: it owns the links and the connections, and the engine
/// calls it back (see the module's doc).
pub trait Application {
    /// The application's own events ([`Event::App`]).
    type Event: Copy;
    type Queue: Queue<Event<Self::Event>>;
    fn engine(&mut self) -> &mut Engine<Self::Queue>;
    /// Schedule the first events.
    fn start(&mut self);
    fn on_event(&mut self, event: Self::Event);
    /// Channel `c`, with the engine.
    fn channel(&mut self, c: u32) -> (&mut Channel, &mut Engine<Self::Queue>);
    /// Channel `c`'s head event came, and the engine took its packet (none: an AQM's
    /// transmission end, or a packet it dropped at the head) and scheduled the next.
    fn on_channel_head(&mut self, c: u32, packet: Option<Packet>);
    /// Session `id`'s wake-up came ([`Event::Wake`]): hand it the time.
    fn on_wake(&mut self, id: u32);
    /// Before the flush: write out what the event held back (the swarm's control messages).
    #[inline(always)]
    fn before_flush(&mut self) {}
    /// Put a packet an endpoint sent on its first link.
    fn send(&mut self, packet: Packet);
    /// The run is over before its duration (every flow done, the completions reached).
    fn finished(&self) -> bool;
    /// Every [`PROGRESS_EVERY`] events, before `progress` is asked: false stops the run
    /// (`interrupted`), as `progress` can. [`Simulation`](crate::Simulation) hands its trace
    /// rows to a stream here.
    #[inline(always)]
    fn at_progress(&mut self) -> bool {
        true
    }
    /// A swarm's peers and completions, for `progress` ([`Tick::swarm`]); None for flows.
    fn swarm_status(&self) -> Option<SwarmStatus> {
        None
    }
}

/// Run `app` to the end (its duration, or [`Application::finished`]); returns the end time. It
/// stops early (and `interrupted` is set) when `progress` returns false or a user's controller
/// faults.
pub fn advance_with<A: Application>(app: &mut A, progress: Progress) -> u64 {
    guest_fault(app.engine().guests); // a fault of an earlier run on this thread
    app.start();
    let duration_ns = app.engine().duration_ns;
    let mut end = duration_ns;
    while let Some((t, event)) = app.engine().queue.pop() {
        if t > duration_ns {
            break;
        }
        let engine = app.engine();
        engine.now = t;
        engine.events += 1;
        match event {
            Event::ChannelHead(c) => {
                let (channel, engine) = app.channel(c);
                let popped = channel.pop_head(t);
                if let Some(next) = channel.rearm() {
                    engine.queue.push_link(next, Event::ChannelHead(c));
                }
                app.on_channel_head(c, popped);
            }
            Event::App(x) => app.on_event(x),
            Event::Wake(id) => app.on_wake(id),
        }
        flush(app);
        let engine = app.engine();
        if let Some(fault) = guest_fault(engine.guests) {
            engine.fault = Some(fault);
            engine.interrupted = true;
            end = t;
            break;
        }
        if app.finished() {
            end = t;
            break;
        }
        if told_to_stop(app, t, duration_ns, progress) {
            app.engine().interrupted = true;
            end = t;
            break;
        }
    }
    end
}

/// Whether a run stops at `now`: every [`PROGRESS_EVERY`] events the application
/// ([`Application::at_progress`]) and `progress` are asked.
#[inline(always)]
fn told_to_stop<A: Application>(app: &mut A, now: u64, duration: u64, progress: Progress) -> bool {
    app.engine().events & (PROGRESS_EVERY - 1) == 0
        && (!app.at_progress()
            || !progress(&Tick {
                now_ns: now,
                end_ns: duration,
                swarm: app.swarm_status(),
            }))
}

/// The fault of a user's controller on this thread, taken (`slowstart_cc::external`); only
/// looked for where the run has one (`guests`), since a built-in never faults.
#[inline]
fn guest_fault(guests: bool) -> Option<String> {
    if guests && slowstart_cc::external::faulted() {
        slowstart_cc::external::take_fault()
    } else {
        None
    }
}

/// Send the packets the endpoints produced.
#[inline(always)]
fn flush<A: Application>(app: &mut A) {
    app.before_flush();
    let engine = app.engine();
    if engine.io.packets.is_empty() {
        return;
    }
    let mut packets = std::mem::take(&mut engine.io.packets);
    for p in packets.drain(..) {
        app.send(p);
    }
    app.engine().io.packets = packets;
}

const ARITY: usize = 4;

/// The key of an entry scheduled at `time`: the time in the high 64 bits and the insertion
/// counter below (then advanced), so keys are unique and same-time entries pop first in, first
/// out. Both queues make their keys here.
#[inline(always)]
pub(crate) fn next_key(time: u64, inserted: &mut u64) -> u128 {
    let key = (time as u128) << 64 | *inserted as u128;
    *inserted += 1;
    key
}

/// The time of an entry's key.
#[inline(always)]
pub(crate) fn time_of(key: u128) -> u64 {
    (key >> 64) as u64
}

/// A 4-ary min-heap; `keys[i]` is entry `i`'s time in the high 64 bits and its insertion counter
/// below, so keys are unique.
struct Heap<E> {
    keys: Vec<u128>,
    events: Vec<E>,
}

impl<E: Copy> Heap<E> {
    fn push(&mut self, key: u128, event: E) {
        let mut i = self.keys.len();
        self.keys.push(key);
        self.events.push(event);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.keys[parent] <= key {
                break;
            }
            self.keys[i] = self.keys[parent];
            self.events[i] = self.events[parent];
            i = parent;
        }
        self.keys[i] = key;
        self.events[i] = event;
    }

    fn top(&self) -> Option<u128> {
        self.keys.first().copied()
    }

    /// Remove the top entry (the heap must not be empty) and return its event.
    fn pop(&mut self) -> E {
        let top = self.events[0];
        let key = self.keys.pop().expect("not empty");
        let event = self.events.pop().expect("not empty");
        let n = self.keys.len();
        if n == 0 {
            return top;
        }
        // Sift the last entry down from the root.
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let child = if first + ARITY <= n {
                // A full node: a tournament the compiler can do without branches.
                let k = &self.keys[first..first + ARITY];
                let a = usize::from(k[1] < k[0]);
                let b = 2 + usize::from(k[3] < k[2]);
                first + if k[b] < k[a] { b } else { a }
            } else {
                let mut child = first;
                for c in first + 1..n {
                    if self.keys[c] < self.keys[child] {
                        child = c;
                    }
                }
                child
            };
            if self.keys[child] >= key {
                break;
            }
            self.keys[i] = self.keys[child];
            self.events[i] = self.events[child];
            i = child;
        }
        self.keys[i] = key;
        self.events[i] = event;
        top
    }
}

impl<E> Default for Heap<E> {
    fn default() -> Self {
        Self {
            keys: Vec::new(),
            events: Vec::new(),
        }
    }
}

/// The pending events; `E` is the simulation's event type ([`Event`] for flows, the swarm's own
/// for swarms).
///
/// The entry pushed last waits beside the heaps (`newest`) until the next push moves it in. A
/// packet that leaves a node onto an idle link is often the very next event (an ACK crossing
/// the sender's fast access link, the data it releases crossing it the other way), and then it
/// is popped without ever entering a heap. A pop still takes the least key of all pending
/// entries, so the order is the same.
pub struct EventQueue<E> {
    links: Heap<E>,
    others: Heap<E>,
    /// The last entry pushed, if not popped yet: key, event and whether it is a link head.
    newest: Option<(u128, E, bool)>,
    inserted: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            links: Heap::default(),
            others: Heap::default(),
            newest: None,
            inserted: 0,
        }
    }
}

impl<E: Copy> EventQueue<E> {
    /// Hold (key, event) as the newest entry and move the one it replaces into its heap.
    #[inline(always)]
    fn hold(&mut self, key: u128, event: E, link: bool) {
        if let Some((k, e, l)) = self.newest.replace((key, event, link)) {
            if l {
                self.links.push(k, e);
            } else {
                self.others.push(k, e);
            }
        }
    }

    /// Schedule a timer or any event other than a link's head.
    pub fn push(&mut self, time: u64, event: E) {
        let key = next_key(time, &mut self.inserted);
        self.hold(key, event, false);
    }

    /// Schedule a link head. The order of events does not depend on which push was used.
    pub fn push_link(&mut self, time: u64, event: E) {
        let key = next_key(time, &mut self.inserted);
        self.hold(key, event, true);
    }

    /// The least key in the heaps and whether it is the links' heap's.
    fn heaps_top(&self) -> Option<(u128, bool)> {
        match (self.links.top(), self.others.top()) {
            (Some(l), Some(o)) => Some(if l < o { (l, true) } else { (o, false) }),
            (Some(l), None) => Some((l, true)),
            (None, Some(o)) => Some((o, false)),
            (None, None) => None,
        }
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        let top = self.heaps_top();
        if let Some((key, event, _)) = self.newest {
            if top.is_none_or(|(k, _)| key < k) {
                self.newest = None;
                return Some((time_of(key), event));
            }
        }
        let (key, link) = top?;
        let heap = if link {
            &mut self.links
        } else {
            &mut self.others
        };
        Some((time_of(key), heap.pop()))
    }

    /// The next event, without removing it.
    pub fn peek(&self) -> Option<(u64, E)> {
        let top = self.heaps_top();
        if let Some((key, event, _)) = self.newest {
            if top.is_none_or(|(k, _)| key < k) {
                return Some((time_of(key), event));
            }
        }
        let (key, link) = top?;
        let heap = if link { &self.links } else { &self.others };
        Some((time_of(key), heap.events[0]))
    }

    pub fn peek_time(&self) -> Option<u64> {
        self.peek().map(|(t, _)| t)
    }

    pub fn len(&self) -> usize {
        self.links.keys.len() + self.others.keys.len() + usize::from(self.newest.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<E: Copy> Queue<E> for EventQueue<E> {
    #[inline(always)]
    fn push(&mut self, time: u64, event: E) {
        EventQueue::push(self, time, event)
    }

    #[inline(always)]
    fn push_link(&mut self, time: u64, event: E) {
        EventQueue::push_link(self, time, event)
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<(u64, E)> {
        EventQueue::pop(self)
    }
}

/// The calendar's reach: 2^26 ns, about 67 ms, past every link head of an ADSL swarm (a
/// 1500-byte packet at 1 Mbps is 12 ms, plus at most 25 ms of propagation). Entries further
/// ahead (retransmission timers, rechokes, arrivals) wait in a heap until the ring reaches them.
const CALENDAR_REACH_SHIFT: u32 = 26;
/// The widest bucket, 2^15 ns (about 33 us; 2048 buckets): a 100-leecher swarm has about 16 000
/// events per simulated second (`scenarios/swarm-adsl.toml`: 12.4 M events over 757 s), so a
/// bucket holds one or two entries.
const CALENDAR_WIDEST_SHIFT: u32 = 15;
/// The narrowest, 2^10 ns (65 536 buckets: 256 kB of list heads).
const CALENDAR_NARROWEST_SHIFT: u32 = 10;
/// No node: the end of a list of [`Nodes`] or of their free list.
pub(crate) const NIL: u32 = u32::MAX;

/// An entry of a queue that keeps its entries in lists (the calendar's buckets, the timing
/// wheel's slots): its key, its event and the next node of its list.
#[derive(Clone, Copy)]
pub(crate) struct Node<E> {
    pub key: u128,
    pub event: E,
    pub next: u32,
}

/// The nodes of such a queue, numbered, with the freed ones reused last freed first, so a
/// push writes to memory a recent pop used.
pub(crate) struct Nodes<E> {
    nodes: Vec<Node<E>>,
    free: u32,
}

impl<E> Default for Nodes<E> {
    fn default() -> Self {
        Nodes {
            nodes: Vec::new(),
            free: NIL,
        }
    }
}

impl<E> Nodes<E> {
    /// A node holding (key, event), at the end of no list; the last freed if any.
    #[inline(always)]
    pub fn take(&mut self, key: u128, event: E) -> u32 {
        let node = Node {
            key,
            event,
            next: NIL,
        };
        if self.free == NIL {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        } else {
            let n = self.free;
            self.free = self.nodes[n as usize].next;
            self.nodes[n as usize] = node;
            n
        }
    }

    /// Node `n` is unlinked: free for the next [`Nodes::take`].
    #[inline(always)]
    pub fn give_back(&mut self, n: u32) {
        self.nodes[n as usize].next = self.free;
        self.free = n;
    }

    /// Unlink the node of least key from the list whose first node is `*head` (a list of a
    /// few entries, unordered; not empty), give it back and return its key and event. `*head`
    /// is [`NIL`] after if the list is then empty.
    #[inline(always)]
    pub fn take_least(&mut self, head: &mut u32) -> (u128, E)
    where
        E: Copy,
    {
        // `before` is the node linking to the least (NIL: the head).
        let (mut before, mut least) = (NIL, *head);
        let (mut prev, mut n) = (least, self.nodes[least as usize].next);
        while n != NIL {
            if self.nodes[n as usize].key < self.nodes[least as usize].key {
                (before, least) = (prev, n);
            }
            (prev, n) = (n, self.nodes[n as usize].next);
        }
        let node = &self.nodes[least as usize];
        let (key, event, next) = (node.key, node.event, node.next);
        if before == NIL {
            *head = next;
        } else {
            self.nodes[before as usize].next = next;
        }
        self.give_back(least);
        (key, event)
    }
}

impl<E> std::ops::Index<usize> for Nodes<E> {
    type Output = Node<E>;
    #[inline(always)]
    fn index(&self, n: usize) -> &Node<E> {
        &self.nodes[n]
    }
}

impl<E> std::ops::IndexMut<usize> for Nodes<E> {
    #[inline(always)]
    fn index_mut(&mut self, n: usize) -> &mut Node<E> {
        &mut self.nodes[n]
    }
}

/// The pending events of a swarm before the timing wheel: a calendar queue (Brown, "Calendar queues: a fast O(1)
/// priority queue implementation for the simulation event set problem", CACM 1988) in front of
/// a heap. Entries are popped in (time, insertion counter) order, as from [`EventQueue`], so
/// a run's results do not depend on which of the two holds its events.
///
/// A swarm keeps a few hundred link heads spread over the next tens of milliseconds; a heap
/// sifts each through four levels, a calendar puts it in the bucket of its time. Bucket `b`
/// (times `b << shift` up to the next bucket's) is slot `b % buckets` while
/// `cursor <= b < cursor + buckets`; no entry lies behind `cursor` (the bucket of the last pop,
/// or below it after a resize), since no event is ever scheduled before the last pop. A slot is
/// a list of nodes, unordered, so a pop scans its bucket; nodes are reused last freed first, so
/// a push writes to memory a recent pop used.
///
/// The ring's reach stays 2^`CALENDAR_REACH_SHIFT` ns; its buckets narrow as the entries in
/// it grow, as Brown's calendar resizes, so a bucket keeps about one entry however large the
/// swarm (issue #37: at 3 000 leechers the fixed 33 us buckets' scans were 9% of the loop's
/// samples). A width of 2^`shift` ns: halved when the ring holds more entries than buckets,
/// doubled back when it holds fewer than one in eight.
pub struct CalendarQueue<E> {
    /// Each slot's first node.
    heads: Box<[u32]>,
    /// Bit `i` set: slot `i` holds entries; a pop finds the next busy slot a word of 64 at a
    /// time instead of stepping through empty buckets.
    busy: Box<[u64]>,
    /// Buckets are 2^shift ns wide; there are 2^(CALENDAR_REACH_SHIFT - shift) of them.
    shift: u32,
    nodes: Nodes<E>,
    cursor: u64,
    /// Entries in the ring.
    in_ring: usize,
    /// Entries beyond the ring's reach.
    later: Heap<E>,
    inserted: u64,
}

impl<E> Default for CalendarQueue<E> {
    fn default() -> Self {
        let buckets = 1usize << (CALENDAR_REACH_SHIFT - CALENDAR_WIDEST_SHIFT);
        Self {
            heads: vec![NIL; buckets].into_boxed_slice(),
            busy: vec![0; buckets / 64].into_boxed_slice(),
            shift: CALENDAR_WIDEST_SHIFT,
            nodes: Nodes::default(),
            cursor: 0,
            in_ring: 0,
            later: Heap::default(),
            inserted: 0,
        }
    }
}

impl<E: Copy> CalendarQueue<E> {
    /// Buckets in the ring.
    #[inline(always)]
    fn buckets(&self) -> u64 {
        self.heads.len() as u64
    }

    /// The slot of bucket `bucket` (the buckets are a power of two).
    #[inline(always)]
    fn slot(&self, bucket: u64) -> usize {
        (bucket & (self.buckets() - 1)) as usize
    }

    /// The bucket of an entry's key.
    #[inline(always)]
    fn bucket_of(&self, key: u128) -> u64 {
        time_of(key) >> self.shift
    }

    /// Schedule `event` at `time`, which must not be earlier than the last pop's.
    #[inline]
    pub fn push(&mut self, time: u64, event: E) {
        let key = next_key(time, &mut self.inserted);
        let bucket = self.bucket_of(key);
        debug_assert!(bucket >= self.cursor, "scheduled before the last pop");
        if bucket - self.cursor < self.buckets() {
            let n = self.nodes.take(key, event);
            self.link(bucket, n);
            if self.in_ring as u64 > self.buckets() && self.shift > CALENDAR_NARROWEST_SHIFT {
                self.resize(self.shift - 1);
            }
        } else {
            self.later.push(key, event);
        }
    }

    /// The same as [`CalendarQueue::push`]: one structure holds every kind of event.
    #[inline]
    pub fn push_link(&mut self, time: u64, event: E) {
        self.push(time, event);
    }

    /// Put node `n` at the head of bucket `bucket`'s list.
    #[inline(always)]
    fn link(&mut self, bucket: u64, n: u32) {
        let slot = self.slot(bucket);
        self.nodes[n as usize].next = self.heads[slot];
        self.heads[slot] = n;
        self.busy[slot / 64] |= 1 << (slot % 64);
        self.in_ring += 1;
    }

    /// Buckets 2^`shift` ns wide, over the same reach: every entry of the ring moves to its
    /// new bucket (or, when buckets widen, to `later` if it is now beyond the ring's reach).
    #[cold]
    fn resize(&mut self, shift: u32) {
        let buckets = 1usize << (CALENDAR_REACH_SHIFT - shift);
        let heads = std::mem::replace(&mut self.heads, vec![NIL; buckets].into_boxed_slice());
        self.busy = vec![0; buckets / 64].into_boxed_slice();
        // The last pop's bucket in the new width, or below it: still behind no entry.
        self.cursor = if shift < self.shift {
            self.cursor << (self.shift - shift)
        } else {
            self.cursor >> (shift - self.shift)
        };
        self.shift = shift;
        self.in_ring = 0;
        for &head in heads.iter() {
            let mut n = head;
            while n != NIL {
                let Node { key, event, next } = self.nodes[n as usize];
                let bucket = self.bucket_of(key);
                if bucket - self.cursor < self.buckets() {
                    self.link(bucket, n);
                } else {
                    self.later.push(key, event);
                    self.nodes.give_back(n);
                }
                n = next;
            }
        }
    }

    /// Buckets from the cursor's to the first busy one, going round the ring (one is busy).
    fn next_busy(&self) -> u64 {
        let words = self.busy.len();
        let start = self.slot(self.cursor);
        let (w, bit) = (start / 64, start % 64);
        let here = self.busy[w] & (u64::MAX << bit);
        if here != 0 {
            return (here.trailing_zeros() as usize - bit) as u64;
        }
        let mut ahead = 64 - bit;
        for k in 1..=words {
            let word = self.busy[(w + k) & (words - 1)];
            if word != 0 {
                return (ahead + word.trailing_zeros() as usize) as u64;
            }
            ahead += 64;
        }
        unreachable!("next_busy on an empty ring")
    }

    /// Move the entries of `later` that the ring now reaches into their buckets.
    fn pull_later(&mut self) {
        while let Some(key) = self.later.top() {
            let bucket = self.bucket_of(key);
            if bucket - self.cursor >= self.buckets() {
                break;
            }
            let event = self.later.pop();
            let n = self.nodes.take(key, event);
            self.link(bucket, n);
        }
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        if self.in_ring == 0 {
            // Nothing within reach: jump to the earliest later entry's bucket.
            let key = self.later.top()?;
            self.cursor = self.bucket_of(key);
            self.pull_later();
        } else {
            let skip = self.next_busy();
            if skip > 0 {
                // Every ring entry is before every later one, so the busy slot holds the least.
                self.cursor += skip;
                self.pull_later();
            }
        }
        let slot = self.slot(self.cursor);
        let (key, event) = self.nodes.take_least(&mut self.heads[slot]);
        if self.heads[slot] == NIL {
            self.busy[slot / 64] &= !(1 << (slot % 64));
        }
        self.in_ring -= 1;
        if (self.in_ring as u64) < self.buckets() / 8 && self.shift < CALENDAR_WIDEST_SHIFT {
            self.resize(self.shift + 1);
        }
        Some((time_of(key), event))
    }

    pub fn len(&self) -> usize {
        self.in_ring + self.later.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<E: Copy> Queue<E> for CalendarQueue<E> {
    #[inline(always)]
    fn push(&mut self, time: u64, event: E) {
        CalendarQueue::push(self, time, event)
    }

    #[inline(always)]
    fn push_link(&mut self, time: u64, event: E) {
        CalendarQueue::push_link(self, time, event)
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<(u64, E)> {
        CalendarQueue::pop(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_pop_in_insertion_order() {
        let mut q = EventQueue::<Event<u32>>::default();
        q.push(5, Event::App(2));
        q.push(5, Event::App(0));
        q.push(3, Event::App(9));
        q.push(5, Event::App(1));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::App(9)),
                (5, Event::App(2)),
                (5, Event::App(0)),
                (5, Event::App(1))
            ]
        );
    }

    proptest::proptest! {
        /// The calendar pops in (time, insertion) order too, with times within a bucket, across
        /// the ring and beyond its reach, and after jumps over empty stretches.
        #[test]
        fn calendar_pops_follow_time_then_insertion(
            ops in proptest::collection::vec((0u64..4, 0u64..1000, proptest::bool::ANY), 1..400),
        ) {
            let mut q = CalendarQueue::<Event<u32>>::default();
            let mut reference = std::collections::BTreeSet::new();
            let mut now = 0;
            for (n, &(scale, dt, pop)) in ops.iter().enumerate() {
                if pop {
                    let got = q.pop();
                    let want = reference.pop_first().map(|(t, n): (u64, usize)| (t, n as u32));
                    proptest::prop_assert_eq!(got.map(|(t, e)| (t, match e {
                        Event::App(n) => n,
                        _ => unreachable!(),
                    })), want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                } else {
                    // Steps of nanoseconds, of about a bucket, of about the ring, and far.
                    let step = [1u64, 1 << (CALENDAR_WIDEST_SHIFT - 6), 1 << (CALENDAR_WIDEST_SHIFT + 5), 1 << 40];
                    let t = now + dt * step[scale as usize];
                    q.push(t, Event::App(n as u32));
                    reference.insert((t, n));
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
            }
            while let Some((t, e)) = q.pop() {
                let (rt, rn) = reference.pop_first().expect("as many entries");
                proptest::prop_assert_eq!((t, e), (rt, Event::App(rn as u32)));
            }
            proptest::prop_assert!(reference.is_empty());
        }
    }

    /// With tens of thousands of entries within reach the buckets narrow, and widen again as
    /// the ring empties; pops keep (time, insertion) order through both.
    #[test]
    fn calendar_resizes_with_the_entries_in_reach() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(37);
        let mut q = CalendarQueue::<Event<u32>>::default();
        let mut reference = std::collections::BTreeSet::new();
        let (mut now, mut n) = (0u64, 0u32);
        let mut narrowest = q.shift;
        let pop = |q: &mut CalendarQueue<Event<u32>>,
                   reference: &mut std::collections::BTreeSet<(u64, u32)>,
                   now: &mut u64| {
            let got = q.pop();
            assert_eq!(got, reference.pop_first().map(|(t, n)| (t, Event::App(n))));
            *now = got.expect("not empty").0;
        };
        // Fill to 80 000 pending, nine in ten within the ring's reach, popping one in three.
        while reference.len() < 80_000 {
            let t = now + rng.random_range(0..(1u64 << CALENDAR_REACH_SHIFT) / 9 * 10);
            q.push(t, Event::App(n));
            reference.insert((t, n));
            n += 1;
            if n % 3 == 0 {
                pop(&mut q, &mut reference, &mut now);
            }
            narrowest = narrowest.min(q.shift);
        }
        assert_eq!(narrowest, CALENDAR_NARROWEST_SHIFT);
        while !reference.is_empty() {
            pop(&mut q, &mut reference, &mut now);
        }
        assert_eq!(q.pop(), None);
        assert_eq!(q.shift, CALENDAR_WIDEST_SHIFT);
    }

    proptest::proptest! {
        /// Whichever heap an event goes to, pops come out in (time, insertion) order: the same
        /// order as sorting everything pushed, interleaved with pops at random.
        #[test]
        fn pops_follow_time_then_insertion(
            ops in proptest::collection::vec((0u64..50, proptest::bool::ANY, 0u8..3), 1..400),
        ) {
            let mut q = EventQueue::<Event<u32>>::default();
            let mut reference = std::collections::BTreeSet::new();
            let mut now = 0;
            for (n, &(dt, link, op)) in ops.iter().enumerate() {
                if op == 0 {
                    let got = q.pop();
                    let want = reference.pop_first().map(|(t, n): (u64, usize)| (t, n as u32));
                    proptest::prop_assert_eq!(got.map(|(t, e)| (t, match e {
                        Event::ChannelHead(n) | Event::App(n) => n,
                        Event::Wake(..) => unreachable!(),
                    })), want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                } else {
                    // Never earlier than the last pop, as in a simulation.
                    let t = now + dt;
                    if link {
                        q.push_link(t, Event::ChannelHead(n as u32));
                    } else {
                        q.push(t, Event::App(n as u32));
                    }
                    reference.insert((t, n));
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
                proptest::prop_assert_eq!(q.peek_time(), reference.first().map(|&(t, _)| t));
            }
        }
    }
}
