//! Packet-timed rounds: a round trip counted in data, not time. A round begins at a mark in the
//! sender's byte counts and ends at the first ACK showing that data sent after the mark has been
//! delivered. Two readings of "sent after the mark" are in use; each controller keeps the one of
//! the source it follows:
//!
//! - By delivery ([`RoundCounter::on_sample`]; draft-ietf-ccwg-bbr-06 §5.5.1 `UpdateRound`,
//!   Linux tcp_bbr.c, HyStart in tcp_cubic.c, RFC 9406 windowEnd): the mark is the delivered
//!   count when the round began, and a rate sample whose packet left once that much had been
//!   delivered (`prior_delivered >= mark`) ends the round.
//! - By sequence ([`RoundCounter::on_cumulative_ack`]; Linux tcp_vegas.c `beg_snd_nxt`): the
//!   mark is everything sent when the round began (delivered + in flight), and the round ends
//!   when the delivered count passes it.

/// Round counting for one controller: the mark the current round waits for, how many rounds
/// have begun and whether the last ACK began one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundCounter {
    end: u64,
    count: u64,
    started: bool,
}

impl RoundCounter {
    /// No round begun yet (mark 0).
    pub const fn new() -> Self {
        Self {
            end: 0,
            count: 0,
            started: false,
        }
    }

    /// By delivery: a rate sample of a packet sent when `prior_delivered` bytes had been
    /// delivered, `delivered` bytes delivered now. Returns whether it began a round (the next
    /// one then waits for data sent from now on).
    pub fn on_sample(&mut self, prior_delivered: u64, delivered: u64) -> bool {
        self.started = prior_delivered >= self.end;
        if self.started {
            self.end = delivered;
            self.count += 1;
        }
        self.started
    }

    /// By sequence: an ACK that brought the delivered count to `delivered`, with `sent` bytes
    /// sent in all (delivered + in flight). Returns whether it began a round.
    pub fn on_cumulative_ack(&mut self, delivered: u64, sent: u64) -> bool {
        self.started = delivered > self.end;
        if self.started {
            self.end = sent;
            self.count += 1;
        }
        self.started
    }

    /// An ACK without a rate sample: no round begins.
    pub fn no_sample(&mut self) {
        self.started = false;
    }

    /// Start the current round over at `end` (`BBRStartRound`, `vegas_enable`), not counted.
    pub fn restart(&mut self, end: u64) {
        self.end = end;
    }

    /// Treat this moment as the start of a round without moving the mark or counting it
    /// (tcp_bbr.c treats an RTO like the end of a round).
    pub fn set_started(&mut self) {
        self.started = true;
    }

    /// The last ACK began a round (BBR's `round_start`).
    pub fn started(&self) -> bool {
        self.started
    }

    /// Rounds begun so far (BBR's `round_count`, tcp_bbr.c `rtt_cnt`).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The mark the current round waits for.
    pub fn end(&self) -> u64 {
        self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_delivery_a_round_ends_when_data_sent_after_its_start_is_delivered() {
        let mut r = RoundCounter::new();
        assert!(
            r.on_sample(0, 10),
            "the first sample begins the first round"
        );
        assert_eq!((r.count(), r.end()), (1, 10));
        assert!(!r.on_sample(9, 15) && !r.started());
        assert!(r.on_sample(10, 20) && r.started());
        assert_eq!((r.count(), r.end()), (2, 20));
        r.no_sample();
        assert!(!r.started());
        r.restart(30);
        assert!(!r.on_sample(25, 35));
        assert_eq!((r.count(), r.end()), (2, 30));
    }

    #[test]
    fn by_sequence_a_round_ends_when_delivery_passes_what_was_sent() {
        let mut r = RoundCounter::new();
        assert!(r.on_cumulative_ack(5, 25));
        assert!(
            !r.on_cumulative_ack(25, 40),
            "25 delivered is not past 25 sent"
        );
        assert!(r.on_cumulative_ack(26, 40));
        assert_eq!((r.count(), r.end()), (2, 40));
    }
}
