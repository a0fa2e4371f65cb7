//! The link model: what happens to a packet between two endpoints, shared by the simulator and
//! the link emulator.
//!
//! Each link direction is a [`channel::Channel`] built from a
//! `slowstart_config::DirectionConfig`: a buffer (bytes or packets) under a queue discipline,
//! served at the line rate or by a capacity trace, then propagation delay, random loss
//! (Bernoulli or Gilbert-Elliott), deterministic drops and jitter. A channel is sans-IO: it is
//! offered packets at a time and hands them out at their arrival times, and neither knows nor
//! cares whose clock that is. The engine (`slowstart_sim`) drives it from its event queue; the
//! emulator (`slowstart_emu`) drives the same code from the wall clock between two TUN devices.
//!
//! # What is here
//! - [`channel`]: a link direction, its queue, loss and statistics.
//! - [`aqm`]: the active queue managements a direction can run (RED, CoDel, FQ-CoDel, PIE,
//!   DualPI2), each deciding at enqueue or dequeue as its RFC says.
//! - [`opportunities`]: capacity traces (Mahimahi's delivery opportunities).
//! - [`topology`]: nodes, duplex links split into two channels, static shortest-path routes.
//! - [`cross`]: traffic without congestion control (CBR and on/off sources), seeded per source.
//! - [`summary`]: a link's end-of-run counts, as both the simulator and the emulator report.
//! - [`pcap`]: pcap files of what crosses a link.
//!
//! # Dependencies
//! Below: `slowstart_config` (the direction, queue and cross-traffic tables, seeds) and
//! `slowstart_transport` (the packet record a channel carries). Above: `slowstart_sim` and
//! `slowstart_emu`. No event loop: time comes in as an argument.

pub mod aqm;
pub mod channel;
pub mod cross;
pub mod opportunities;
pub mod pcap;
pub mod summary;
pub mod topology;
