// SPDX-License-Identifier: GPL-2.0
/*
 * Fault: cong_avoid reads 64 KiB past the start of the socket, by plain pointer arithmetic
 * (no CO-RE relocation, so no loader can move it into the socket): a read out of bounds. The
 * kernel's verifier rejects it; the simulator's VM must stop it and name the program.
 */
#include "tcp_ca.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops")
void BPF_PROG(oob_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	__u32 beyond = *(volatile __u32 *)((char *)sk + 65536);

	tcp_sk(sk)->snd_cwnd += beyond & 1;
}

SEC("struct_ops")
__u32 BPF_PROG(oob_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(oob_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_oob = {
	.ssthresh = (void *)oob_ssthresh,
	.cong_avoid = (void *)oob_cong_avoid,
	.undo_cwnd = (void *)oob_undo_cwnd,
	.name = "bpf_oob",
};
