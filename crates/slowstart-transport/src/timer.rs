//! A timer: a deadline an endpoint sets and clears, fired by the session that holds it.
//!
//! A driver never sees a timer alone. It asks a flow session for its one deadline
//! ([`crate::session::Session::poll_timeout`], the earliest of its timers') and hands the session
//! back the time when it comes ([`crate::session::Session::handle_timeout`]); an event heap keeps
//! at most one entry per session ([`crate::session::Wake`]).

/// Which timer of a flow's endpoints fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TimerKind {
    /// The sender's RFC 6298 retransmission timer.
    Retransmission,
    /// RFC 8985 §7 tail loss probe.
    LossProbe,
    DelayedAck,
    Pacing,
    /// The request stream's retransmission timer.
    Request,
}

#[derive(Clone, Copy, Debug)]
pub struct Timer {
    /// The deadline, ns; [`NEVER`]: none (so the earliest of several is a plain `min`).
    at: u64,
}

/// No deadline.
pub const NEVER: u64 = u64::MAX;

impl Default for Timer {
    fn default() -> Self {
        Timer { at: NEVER }
    }
}

impl Timer {
    #[inline]
    pub fn deadline(&self) -> Option<u64> {
        (self.at != NEVER).then_some(self.at)
    }

    /// The deadline, or [`NEVER`].
    #[inline(always)]
    pub fn at(&self) -> u64 {
        self.at
    }

    /// Set or clear the deadline.
    #[inline]
    pub fn set(&mut self, deadline: Option<u64>) {
        self.at = deadline.unwrap_or(NEVER);
    }

    /// True if the deadline has come by `now` (and clears it).
    #[inline]
    pub fn fire(&mut self, now: u64) -> bool {
        if self.at <= now && self.at != NEVER {
            self.at = NEVER;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timer_fires_once_its_deadline_has_come() {
        let mut t = Timer::default();
        t.set(Some(100));
        assert!(!t.fire(99), "not due yet");
        t.set(Some(200));
        assert!(!t.fire(100), "moved later");
        assert!(t.fire(250));
        assert_eq!(t.deadline(), None);
        assert!(!t.fire(300), "fired once");
    }
}
