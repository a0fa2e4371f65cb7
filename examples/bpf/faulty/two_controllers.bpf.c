// SPDX-License-Identifier: GPL-2.0
/*
 * Fault: two tcp_congestion_ops in one object (bpf_two_a and bpf_two_b, both Reno). The
 * kernel registers each; the simulator runs one controller per object and must say which
 * two it found rather than pick one.
 */
#include "tcp_ca.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops")
__u32 BPF_PROG(two_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(two_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(two_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_two_a = {
	.ssthresh = (void *)two_ssthresh,
	.cong_avoid = (void *)two_cong_avoid,
	.undo_cwnd = (void *)two_undo_cwnd,
	.name = "bpf_two_a",
};

SEC(".struct_ops")
struct tcp_congestion_ops bpf_two_b = {
	.ssthresh = (void *)two_ssthresh,
	.cong_avoid = (void *)two_cong_avoid,
	.undo_cwnd = (void *)two_undo_cwnd,
	.name = "bpf_two_b",
};
