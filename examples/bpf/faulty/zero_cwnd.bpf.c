// SPDX-License-Identifier: GPL-2.0
/*
 * Fault: cong_avoid sets snd_cwnd to 0, a window that can send nothing. The kernel's
 * verifier accepts it (do not register it on a machine you use: its connections stall); the
 * simulator must refuse the value and name the controller.
 */
#include "tcp_ca.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops")
void BPF_PROG(zero_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_sk(sk)->snd_cwnd = 0;
}

SEC("struct_ops")
__u32 BPF_PROG(zero_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(zero_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_zero = {
	.ssthresh = (void *)zero_ssthresh,
	.cong_avoid = (void *)zero_cong_avoid,
	.undo_cwnd = (void *)zero_undo_cwnd,
	.name = "bpf_zero",
};
