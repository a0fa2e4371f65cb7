// SPDX-License-Identifier: GPL-2.0
/*
 * Fault: cong_avoid calls a kernel function that exists nowhere (no kernel has it, the
 * simulator's VM does not provide it). Declared __ksym, not __weak, so a loader must refuse
 * the object at load time, naming the function, rather than run it.
 */
#include "tcp_ca.h"

char _license[] SEC("license") = "GPL";

extern void slowstart_no_such_kfunc(struct sock *sk, __u32 acked) __ksym;

SEC("struct_ops")
void BPF_PROG(unknown_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	slowstart_no_such_kfunc(sk, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(unknown_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(unknown_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_unknown = {
	.ssthresh = (void *)unknown_ssthresh,
	.cong_avoid = (void *)unknown_cong_avoid,
	.undo_cwnd = (void *)unknown_undo_cwnd,
	.name = "bpf_unknown",
};
