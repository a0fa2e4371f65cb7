//! A timer whose deadline can move often without a wake-up each time it moves.
//!
//! The driver (an event heap, a poll loop) holds at most one wake-up per timer: the earliest
//! time it was armed for. A wake-up that finds the deadline moved later re-arms; one that finds
//! it due fires. Endpoints ask for wake-ups through [`crate::Io::wake`].

/// Which timer of a flow's endpoints a wake-up is for.
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
    /// The application's own clock (BitTorrent's once-a-second tick). The transport never arms
    /// it; an application on top shares the flow's [`crate::Io`] and asks for it there.
    App,
}

#[derive(Clone, Copy, Debug)]
pub struct Timer {
    deadline: Option<u64>,
    /// Earliest time a wake-up for this timer is pending (u64::MAX when none).
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

    /// Set or clear the deadline; returns a time to be woken at if a wake-up is needed.
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

    /// A wake-up for this timer came at `now`: true if the deadline is due (and clears it).
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
