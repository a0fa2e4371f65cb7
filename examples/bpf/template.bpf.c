// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_template: a controller to copy and change (README.md). It is Reno with two parameters,
 * written out where reno.bpf.c calls the kernel's Reno, to show the four things most
 * controllers need: state of their own (inet_csk_ca), parameters a loader can set
 * (const volatile), socket fields read and written (tp->snd_cwnd: CO-RE, relocated by name),
 * and the kfuncs for the usual steps. Rename it (file, .name, the struct's variable) first.
 */
#include "tcp_ca.h"

char _license[] SEC("license") = "GPL";

/* Parameters: `--cc template.bpf.o:beta=512,increase=2` in the simulator. */
const volatile __u32 beta = 512;    /* cwnd kept on a loss, / 1024 */
const volatile __u32 increase = 1; /* segments added per RTT in congestion avoidance */

/* Per-connection state: at most 104 bytes (ICSK_CA_PRIV_SIZE), zeroed before init. */
struct template_state {
	__u32 loss_cwnd; /* cwnd before the last reduction, for undo */
};

SEC("struct_ops")
void BPF_PROG(template_init, struct sock *sk)
{
	struct template_state *ca = inet_csk_ca(sk);

	ca->loss_cwnd = 0;
}

SEC("struct_ops")
__u32 BPF_PROG(template_ssthresh, struct sock *sk)
{
	struct template_state *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	ca->loss_cwnd = tp->snd_cwnd;
	return max(tp->snd_cwnd * beta / 1024, 2U);
}

SEC("struct_ops")
void BPF_PROG(template_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked); /* +1 per segment ACKed, up to ssthresh */
		if (!acked)
			return;
	}
	/* +1 segment per w segments ACKed: `increase` per RTT */
	tcp_cong_avoid_ai(tp, max(tp->snd_cwnd / max(increase, 1U), 1U), acked);
}

SEC("struct_ops")
__u32 BPF_PROG(template_undo_cwnd, struct sock *sk)
{
	const struct template_state *ca = inet_csk_ca(sk);

	return max(tcp_sk(sk)->snd_cwnd, ca->loss_cwnd);
}

/* The variable's name is the map's, which `bpftool struct_ops unregister name` takes: keep it
 * the same as .name (at most 15 characters). */
SEC(".struct_ops")
struct tcp_congestion_ops bpf_template = {
	.init = (void *)template_init,
	.ssthresh = (void *)template_ssthresh,
	.cong_avoid = (void *)template_cong_avoid,
	.undo_cwnd = (void *)template_undo_cwnd,
	.name = "bpf_template",
};
