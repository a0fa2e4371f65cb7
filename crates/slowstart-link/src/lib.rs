//! Links, queues and static routing.

pub mod aqm;
pub mod channel;
pub mod cross;
pub mod opportunities;
pub mod pcap;
pub mod topology;
