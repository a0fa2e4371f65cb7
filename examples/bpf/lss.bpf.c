// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_lss: Limited Slow-Start, RFC 3742 (Floyd 2004; first tried in the net100 project's
 * Linux kernels). Below max_ssthresh, standard slow start: +1 segment per segment ACKed.
 * Above it, RFC 3742 §2 per ACK:
 *
 *     K = int(cwnd / (0.5 max_ssthresh))
 *     cwnd += int(MSS / K)
 *
 * so cwnd grows by at most max_ssthresh/2 segments per RTT instead of doubling. Here cwnd is
 * in segments, so +1/K segment is counted in tp->snd_cwnd_cnt (K credits make a segment), as
 * Linux 2.6 did with its sysctl tcp_max_ssthresh (net/ipv4/tcp_cong.c, tcp_slow_start), and
 * per segment ACKed rather than per ACK, as Linux counts (`acked`; RFC 3465's byte counting
 * with L = 1 ACK's worth). Above ssthresh, and for loss, Reno.
 */
#include "tcp_ca.h"

char _license[] SEC("license") = "GPL";

/* RFC 3742's max_ssthresh, in segments (the RFC suggests 100 MSS); 0 turns the limit off. */
const volatile __u32 max_ssthresh = 100;

SEC("struct_ops")
void BPF_PROG(lss_init, struct sock *sk)
{
}

SEC("struct_ops")
__u32 BPF_PROG(lss_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

/*
 * Slow start limited above max_ssthresh, for `acked` segments; what is left once cwnd
 * reaches ssthresh is returned, for congestion avoidance (as tcp_slow_start returns it).
 */
static __always_inline __u32 limited_slow_start(struct tcp_sock *tp, __u32 acked)
{
	__u32 cwnd = tp->snd_cwnd, ssthresh = tp->snd_ssthresh;
	__u32 n, k;

	if (!max_ssthresh)
		return tcp_slow_start(tp, acked);
	/* cwnd <= max_ssthresh: +1 per segment up to max_ssthresh + 1 (and ssthresh) */
	if (cwnd <= max_ssthresh) {
		n = min(acked, min(max_ssthresh + 1, ssthresh) - cwnd);
		cwnd += n;
		acked -= n;
	}
	/* cwnd > max_ssthresh: +1/K per segment, K = int(cwnd / (0.5 max_ssthresh)) >= 2,
	 * with K taken from the cwnd this ACK found above max_ssthresh */
	if (acked && cwnd > max_ssthresh && cwnd < ssthresh) {
		k = cwnd * 2 / max_ssthresh;
		tp->snd_cwnd_cnt += acked;
		acked = 0;
		if (tp->snd_cwnd_cnt >= k) {
			n = tp->snd_cwnd_cnt / k;
			tp->snd_cwnd_cnt -= n * k;
			cwnd = min(cwnd + n, ssthresh);
		}
	}
	tp->snd_cwnd = min(cwnd, tp->snd_cwnd_clamp);
	return acked;
}

SEC("struct_ops")
void BPF_PROG(lss_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = limited_slow_start(tp, acked);
		if (!acked)
			return;
	}
	/* congestion avoidance: Reno's +1 segment per cwnd ACKed */
	tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(lss_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_lss = {
	.init = (void *)lss_init,
	.ssthresh = (void *)lss_ssthresh,
	.cong_avoid = (void *)lss_cong_avoid,
	.undo_cwnd = (void *)lss_undo_cwnd,
	.name = "bpf_lss",
};
