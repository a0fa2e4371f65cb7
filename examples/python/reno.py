"""Reno (RFC 5681 §3) written as a Python controller, the way the built-in `reno` runs it
(crates/slowstart-cc/src/loss_based.rs and window.rs): byte counting (RFC 3465) or one MSS per
ACK, growth only while the window limits sending, outside recovery; a loss halves the window
(an ECN mark keeps 4/5, RFC 8511), a timeout restarts from one MSS. A run with it is
byte-identical to one with the built-in, which is what tests/test_guests.py checks.

    slowstart run lfn-early-loss --cc examples/python/reno.py:Reno
"""

import slowstart


class Reno(slowstart.Controller):
    def __init__(self, **common):
        super().__init__(**common)
        self.window = max(self.initcwnd, 1) * self.mss
        self.threshold = None  # unset until the first loss
        self.credit = 0  # bytes acknowledged towards the next +1 MSS
        self.state = "slow_start"

    def in_slow_start(self):
        return self.threshold is None or self.window < self.threshold

    def on_ack(self, ev):
        if ev.in_recovery or not ev.cwnd_limited:
            return
        credit = ev.bytes_acked if self.abc else ev.mss
        if self.in_slow_start():
            room = credit if self.threshold is None else self.threshold - self.window
            used = min(credit, room)
            self.window += used
            credit -= used
            if self.in_slow_start():
                return
            self.state = "congestion_avoidance"
        self.state = "congestion_avoidance"
        if credit > 0:
            self.credit += credit
            while self.credit >= self.window:
                self.credit -= self.window
                self.window += ev.mss

    def on_congestion_event(self, ev):
        reduced = self.window * 4 // 5 if ev.ecn else self.window // 2
        self.threshold = max(reduced, 2 * ev.mss, 2 * self.mss)
        self.window = self.threshold
        self.credit = 0
        self.state = "recovery"

    def on_recovery_exit(self, now):
        self.state = "rto_recovery" if self.in_slow_start() else "congestion_avoidance"

    def on_rto(self, now, bytes_in_flight):
        if self.state not in ("recovery", "rto_recovery"):
            self.threshold = max(self.window // 2, 2 * self.mss)
        self.window = self.mss
        self.credit = 0
        self.state = "rto_recovery"

    def cwnd(self):
        return self.window

    def ssthresh(self):
        return self.threshold

    def phase(self):
        return self.state
