// SPDX-License-Identifier: GPL-2.0
/*
 * Fault: cong_avoid never returns. The loop stores to a global on every turn, so the compiler
 * keeps it (an infinite loop without side effects may be assumed to end, C11 6.8.5p6). The
 * kernel's verifier rejects it (an unbounded loop); the simulator's VM must stop it by its
 * instruction budget.
 */
#include "tcp_ca.h"

char _license[] SEC("license") = "GPL";

volatile __u64 turns;

SEC("struct_ops")
void BPF_PROG(loop_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	for (;;)
		turns++;
}

SEC("struct_ops")
__u32 BPF_PROG(loop_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(loop_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_endless = {
	.ssthresh = (void *)loop_ssthresh,
	.cong_avoid = (void *)loop_cong_avoid,
	.undo_cwnd = (void *)loop_undo_cwnd,
	.name = "bpf_endless",
};
