"""TCP Hybla (Caini and Firrincieli, 2004) as Linux's tcp_hybla.c computes it, written as a
Python controller before the built-in `hybla` (crates/slowstart-cc/src/hybla.rs, model=linux):
rho = max(RTT / RTT0, 1) in eighths from the lowest smoothed RTT; slow start adds 2^rho - 1
segments per ACK, congestion avoidance rho^2 / cwnd, fractions of a segment carried in 1/128ths;
Reno's halving on loss, and Reno's growth while repairing after a timeout (`hybla_en`). A run
with it is byte-identical to one with the built-in, which tests/test_guests.py checks.

    slowstart run satellite --cc examples/python/hybla.py:Hybla:rtt0_ms=25
"""

import slowstart

# tcp_hybla.c `hybla_fraction`: 2^(i/8) << 7 for i in 0..8.
FRACTIONS = (128, 139, 152, 165, 181, 197, 215, 234)
CWND_CLAMP = 65_535  # tcp_hybla.c `hybla_init`: snd_cwnd_clamp, segments


class Hybla(slowstart.Controller):
    def __init__(self, rtt0_ms=25, **common):
        super().__init__(**common)
        self.rtt0 = int(rtt0_ms) * 1_000_000
        self.window = max(self.initcwnd, 1) * self.mss
        self.threshold = None  # unset until the first loss
        self.state = "slow_start"
        self.base_rtt = None  # lowest srtt seen (tcp_hybla.c minrtt_us)
        self.rho_8 = 8  # rho in eighths, at least 1 (rho_3ls)
        self.cents = 0  # 1/128ths of a segment (snd_cwnd_cents)
        self.count = 0  # ACKs since the last increase below one segment (snd_cwnd_cnt)
        self.credit = 0  # Reno's byte credit, while repairing after a timeout
        self.open = True  # not repairing after a timeout (hybla_en)

    def in_slow_start(self):
        return self.threshold is None or self.window < self.threshold

    def lower_rtt(self, rtt):
        if rtt > 0 and (self.base_rtt is None or rtt < self.base_rtt):
            self.base_rtt = rtt
            self.rho_8 = max(rtt * 8 // self.rtt0, 8)

    def add(self, segments, increment):
        """Add `increment` 1/128ths of a segment to `segments`, carrying the fraction."""
        segments += increment >> 7
        self.cents += increment % 128
        while self.cents >= 128:
            segments += 1
            self.cents -= 128
            self.count = 0
        if increment == 0 and self.count >= segments:
            segments += 1
            self.count = 0
        return min(segments, CWND_CLAMP)

    def on_rtt_sample(self, now, rtt):
        if self.state == "slow_start" and self.in_slow_start():
            self.lower_rtt(rtt)

    def on_ack(self, ev):
        self.lower_rtt(ev.srtt)
        if ev.in_recovery or not ev.cwnd_limited:
            return
        credit = ev.bytes_acked if self.abc else ev.mss
        if self.in_slow_start():
            if self.open:
                whole, eighths = self.rho_8 >> 3, self.rho_8 & 7
                increment = (1 << min(whole, 16)) * FRACTIONS[eighths] - 128
                grown = self.add(self.window // ev.mss, increment) * ev.mss
                if self.threshold is not None:
                    grown = min(grown, self.threshold)
                self.window, credit = max(grown, self.window), 0
            else:  # standard slow start back to ssthresh (RFC 5681 §3.1)
                used = min(credit, self.threshold - self.window)
                self.window, credit = self.window + used, credit - used
            if self.in_slow_start():
                return
        self.state = "congestion_avoidance"
        if credit == 0:
            return
        if not self.open:  # Reno: one MSS per window of credit
            self.credit += credit
            while self.credit >= self.window:
                self.credit -= self.window
                self.window += ev.mss
            return
        segments = max(self.window // ev.mss, 1)
        increment = self.rho_8 * self.rho_8 * 2 // segments  # rho^2 / cwnd in 1/128ths
        if increment < 128:
            self.count += 1
        self.window = max(self.add(segments, increment) * ev.mss, self.window)

    def on_congestion_event(self, ev):
        self.threshold = max(self.window // 2, 2 * ev.mss, 2 * self.mss)
        self.window = self.threshold
        self.credit = 0
        self.state = "recovery"

    def on_recovery_exit(self, now):
        self.open = True
        self.state = "rto_recovery" if self.in_slow_start() else "congestion_avoidance"

    def on_rto(self, now, bytes_in_flight):
        if self.state not in ("recovery", "rto_recovery"):
            self.threshold = max(self.window // 2, 2 * self.mss)
        self.open = False
        self.window = self.mss
        self.credit = 0
        self.state = "rto_recovery"

    def cwnd(self):
        return self.window

    def ssthresh(self):
        return self.threshold

    def phase(self):
        return self.state
