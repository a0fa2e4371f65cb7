//! Links, queues and static routing.

pub mod aqm;
pub mod channel;
pub mod opportunities;
pub mod topology;
