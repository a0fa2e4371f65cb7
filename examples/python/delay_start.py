"""A slow start that ends when the RTT rises `rise` above its minimum (a delay signal, after
HyStart's, RFC 9406 §4.2), then Reno's +1 MSS per RTT (RFC 5681 §3.1). The same controller as
the WebAssembly template (examples/wasm-controller), line for line: the two run identically.

    slowstart run satellite --cc examples/python/delay_start.py:DelayStart:rise=0.25
"""

import slowstart


class DelayStart(slowstart.Controller):
    def __init__(self, rise=0.125, **common):
        super().__init__(**common)
        self.rise, self.window, self.threshold, self.acked = rise, self.initcwnd * self.mss, None, 0

    def on_ack(self, ev):
        if not ev.cwnd_limited or ev.in_recovery:
            return
        if self.threshold is None or self.window < self.threshold:
            if ev.min_rtt > 0 and (ev.rtt or 0) > ev.min_rtt * (1 + self.rise):
                self.threshold = self.window  # the queue is building: slow start ends here
            else:
                self.window += min(ev.bytes_acked, 2 * self.mss)  # RFC 3465 §2.3, L = 2
                return
        self.acked += ev.bytes_acked
        if self.acked >= self.window:
            self.acked -= self.window
            self.window += self.mss

    def on_congestion_event(self, ev):
        self.threshold = self.window = max(ev.bytes_in_flight // 2, 2 * self.mss)

    def on_rto(self, now, bytes_in_flight):
        self.threshold, self.window = max(bytes_in_flight // 2, 2 * self.mss), self.mss

    def cwnd(self):
        return self.window

    def ssthresh(self):
        return self.threshold

    def phase(self):
        in_slow_start = self.threshold is None or self.window < self.threshold
        return "slow_start" if in_slow_start else "congestion_avoidance"
