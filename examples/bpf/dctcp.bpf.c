// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_dctcp: DCTCP's sender as Linux runs it, restated from net/ipv4/tcp_dctcp.c (Alizadeh
 * et al., "Data Center TCP", SIGCOMM 2010; RFC 8257). Once per window of data (the ACK that
 * passes the snd_nxt recorded at the window's start) alpha, the fraction of CE-marked
 * segments, is updated: alpha = (1 - g) alpha + g F with g = 1/2^dctcp_shift_g, alpha in
 * units of 1/1024. On a mark the window shrinks by alpha/2: ssthresh = cwnd - cwnd alpha/2^11.
 * Growth is Reno's. The kernel's selftest tools/testing/selftests/bpf/progs/bpf_dctcp.c
 * showed the BPF form.
 *
 * Left out, as they need the kernel itself: the receiver's CE state machine (it sends an
 * immediate ACK when the CE state flips, through bpf_tcp_send_ack; a receiver running
 * bpf_dctcp echoes marks as RFC 3168 does), the fall-back to Reno when the connection did
 * not negotiate ECN (it swaps icsk_ca_ops), and PLB's path rehashing.
 */
#include "tcp_ca.h"

char _license[] SEC("license") = "GPL";

#define DCTCP_MAX_ALPHA 1024U

/* tcp_dctcp.c's module parameters; a loader may set them by name (cubic.bpf.c). */
const volatile __u32 dctcp_shift_g = 4; /* g = 1/2^4; the kernel accepts 0 to 10 */
const volatile __u32 dctcp_alpha_on_init = DCTCP_MAX_ALPHA;

/* struct dctcp of tcp_dctcp.c without PLB's state; renamed, as vmlinux.h has the kernel's. */
struct bpf_dctcp {
	__u32 old_delivered;	/* tp->delivered at the window's start */
	__u32 old_delivered_ce; /* tp->delivered_ce at the window's start */
	__u32 prior_rcv_nxt;
	__u32 dctcp_alpha;	/* fraction of marked segments, / 1024 */
	__u32 next_seq;		/* the window ends when snd_una reaches this */
	__u32 ce_state;
	__u32 loss_cwnd;	/* cwnd before the last reduction, for undo */
};

/* A new observation window: from what is sent now. */
static __always_inline void dctcp_reset(const struct tcp_sock *tp, struct bpf_dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bpf_dctcp *ca = inet_csk_ca(sk);

	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->dctcp_alpha = min(dctcp_alpha_on_init, DCTCP_MAX_ALPHA);
	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	dctcp_reset(tp, ca);
}

/* A mark (or a loss) starts recovery: keep 1 - alpha/2 of the window. */
SEC("struct_ops")
__u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	struct bpf_dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	ca->loss_cwnd = tp->snd_cwnd;
	return max(tp->snd_cwnd - ((tp->snd_cwnd * ca->dctcp_alpha) >> 11U), 2U);
}

/* Every ACK: when a window of data has been acknowledged, fold its marked fraction F into
 * alpha and start the next window. */
SEC("struct_ops")
void BPF_PROG(dctcp_update_alpha, struct sock *sk, __u32 flags)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bpf_dctcp *ca = inet_csk_ca(sk);

	if (!before(tp->snd_una, ca->next_seq)) {
		__u32 delivered = tp->delivered - ca->old_delivered;
		__u32 delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
		__u32 alpha = ca->dctcp_alpha;
		__u32 decay = alpha >> dctcp_shift_g;

		/* alpha = (1 - g) * alpha + g * F; min_not_zero(alpha, alpha >> g) takes
		 * alpha's last units away too, so that alpha decays to 0 */
		alpha -= decay ? min(alpha, decay) : alpha;
		if (delivered_ce) {
			/* g F in 1/1024: delivered_ce * 2^10 / 2^g / delivered (with
			 * dctcp_shift_g 1, 32 bits would overflow after 8 M packets) */
			delivered_ce <<= (10 - dctcp_shift_g);
			delivered_ce /= max(1U, delivered);
			alpha = min(alpha + delivered_ce, DCTCP_MAX_ALPHA);
		}
		ca->dctcp_alpha = alpha;
		dctcp_reset(tp, ca);
	}
}

/* A loss: halve, as Reno, once per episode. */
static __always_inline void dctcp_react_to_loss(struct sock *sk)
{
	struct bpf_dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = max(tp->snd_cwnd >> 1U, 2U);
}

/* Entering fast recovery (from another state) reacts to the loss; an RTO is handled in
 * cwnd_event (CA_EVENT_LOSS), so that there is one reduction per RTT. */
SEC("struct_ops")
void BPF_PROG(dctcp_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Recovery && new_state != tcp_ca_state(sk))
		dctcp_react_to_loss(sk);
}

SEC("struct_ops")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_LOSS)
		dctcp_react_to_loss(sk);
}

/* A reduction proved spurious: back to the cwnd before it. */
SEC("struct_ops")
__u32 BPF_PROG(dctcp_cwnd_undo, struct sock *sk)
{
	const struct bpf_dctcp *ca = inet_csk_ca(sk);

	return max(tcp_sk(sk)->snd_cwnd, ca->loss_cwnd);
}

SEC("struct_ops")
void BPF_PROG(dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_dctcp = {
	.init = (void *)dctcp_init,
	.in_ack_event = (void *)dctcp_update_alpha,
	.cwnd_event = (void *)dctcp_cwnd_event,
	.ssthresh = (void *)dctcp_ssthresh,
	.cong_avoid = (void *)dctcp_cong_avoid,
	.undo_cwnd = (void *)dctcp_cwnd_undo,
	.set_state = (void *)dctcp_state,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = "bpf_dctcp",
};
