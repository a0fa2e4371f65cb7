// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_reno: the kernel's own Reno (net/ipv4/tcp_cong.c, RFC 5681 with Linux's byte counting),
 * each operation a call of the kfunc that implements it: the smallest complete controller.
 * template.bpf.c is the one to copy (README.md).
 */
#include "tcp_ca.h"

char _license[] SEC("license") = "GPL";

/* Called when the controller is attached to a socket; Reno keeps no state of its own. */
SEC("struct_ops")
void BPF_PROG(reno_init, struct sock *sk)
{
}

/* On a loss or an ECN mark: the new ssthresh, half of cwnd (at least 2). */
SEC("struct_ops")
__u32 BPF_PROG(reno_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

/* On an ACK that advances snd_una: slow start below ssthresh, then +1 segment per cwnd. */
SEC("struct_ops")
void BPF_PROG(reno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

/* When a reduction proves spurious: cwnd back to what it was (max of cwnd, prior_cwnd). */
SEC("struct_ops")
__u32 BPF_PROG(reno_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

/* The variable's name is the map's, which `bpftool struct_ops unregister name` takes: the
 * same as .name (at most 15 characters), so that one name does for both. */
SEC(".struct_ops")
struct tcp_congestion_ops bpf_reno = {
	.init = (void *)reno_init,
	.ssthresh = (void *)reno_ssthresh,
	.cong_avoid = (void *)reno_cong_avoid,
	.undo_cwnd = (void *)reno_undo_cwnd,
	.name = "bpf_reno",
};
