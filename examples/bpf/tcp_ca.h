/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every example congestion controller here includes: the kernel's types (build/vmlinux.h,
 * generated from this machine's BTF by the Makefile), libbpf's macros, the kernel functions a
 * struct_ops controller may call (kfuncs), and the small inline helpers of
 * include/net/tcp.h and include/net/inet_connection_sock.h that a BPF program cannot call.
 *
 * One rule for the simulator's eBPF VM (and for CO-RE in general): every read or write of a
 * kernel struct is relocatable by field name. vmlinux.h marks every struct
 * preserve_access_index, so `tp->snd_cwnd` carries a relocation; a bitfield is read only
 * through BPF_CORE_READ_BITFIELD, which relocates its byte offset, size and shifts, never
 * directly (clang then relocates the byte offset alone and masks at this kernel's bit
 * position). Modelled on the kernel's tools/testing/selftests/bpf/bpf_tcp_helpers.h.
 */
#ifndef SLOWSTART_TCP_CA_H
#define SLOWSTART_TCP_CA_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

/* Not in vmlinux.h: they are #defines in include/net/tcp.h. */
#define TCP_CONG_NEEDS_ECN 0x2
#define USEC_PER_MSEC 1000ULL
#define USEC_PER_SEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define clamp(val, lo, hi) min(max(val, lo), hi)

/*
 * The kfuncs net/ipv4/bpf_tcp_ca.c lets a tcp_congestion_ops program call: Reno's three
 * operations and the two building blocks of net/ipv4/tcp_cong.c. The simulator's VM provides
 * the same five.
 */
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

/* The controller's private state: ICSK_CA_PRIV_SIZE (104) bytes inside the socket. */
static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

/* Sequence-number order modulo 2^32 (include/net/tcp.h). */
static __always_inline bool before(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}
#define after(seq2, seq1) before(seq1, seq2)

static __always_inline bool tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/*
 * include/net/tcp.h: in slow start, cwnd may grow to twice what was in flight at the window's
 * largest; otherwise only when the sender was limited by cwnd (is_cwnd_limited, a bitfield).
 */
static __always_inline bool tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (tcp_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return !!BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

/* The TCP_CA_* state the socket is in (icsk_ca_state, a bitfield). */
static __always_inline __u8 tcp_ca_state(const struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);
}

#endif /* SLOWSTART_TCP_CA_H */
