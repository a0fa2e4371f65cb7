// SPDX-License-Identifier: GPL-2.0
/*
 * Fault: a struct_ops program but no tcp_congestion_ops (no .struct_ops section): there is
 * nothing to register or run, and a loader must say so.
 */
#include "tcp_ca.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops")
void BPF_PROG(orphan_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}
