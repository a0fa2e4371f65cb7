//! Links, queues and static routing.

pub mod channel;
pub mod topology;
