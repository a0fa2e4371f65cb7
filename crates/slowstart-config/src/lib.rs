//! The canonical config of a slowstart run (moved out of the engine crate, issue #28).

mod config;
#[doc(hidden)]
pub mod testing;
pub mod trace;

pub use config::*;

/// An error in a scenario or config, naming the field and what is accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SimError {}
