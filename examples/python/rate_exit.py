"""Slow start that ends when the delivery rate stops growing (BBR's full-pipe test,
draft-ietf-ccwg-bbr §4.3.1.2), then Reno's +1 MSS per RTT (RFC 5681 §3.1).

    slowstart run satellite --cc examples/python/rate_exit.py:RateExit:growth=1.25
"""

import slowstart


class RateExit(slowstart.Controller):
    def __init__(self, growth=1.25, **common):
        super().__init__(**common)
        self.growth, self.window, self.threshold = growth, self.initcwnd * self.mss, None
        self.best, self.flat_rounds, self.round_end = 0, 0, 0

    def on_ack(self, ev):
        if self.threshold is None and ev.rate and ev.rate.prior_delivered >= self.round_end:
            self.round_end = ev.delivered  # a round trip has passed: is the rate still growing?
            grew = ev.rate.delivery_rate >= self.best * self.growth
            self.best = max(self.best, ev.rate.delivery_rate) if not grew else ev.rate.delivery_rate
            self.flat_rounds = 0 if grew else self.flat_rounds + 1
            if self.flat_rounds == 3:
                self.threshold = self.window
        if ev.cwnd_limited and not ev.in_recovery:
            grow = ev.bytes_acked if self.threshold is None else ev.mss * ev.bytes_acked
            self.window += grow if self.threshold is None else grow // self.window

    def on_congestion_event(self, ev):
        self.threshold = self.window = max(self.window // 2, 2 * self.mss)

    def on_rto(self, now, bytes_in_flight):
        self.threshold, self.window = max(self.window // 2, 2 * self.mss), self.mss

    def cwnd(self):
        return self.window

    def ssthresh(self):
        return self.threshold

    def phase(self):
        return "slow_start" if self.threshold is None else "congestion_avoidance"
