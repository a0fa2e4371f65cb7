// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_cubic: CUBIC with HyStart as Linux runs it, restated from net/ipv4/tcp_cubic.c (v2.3,
 * Linux 6.x): the cubic window in jiffies with BICTCP_HZ (2^10) time units, fast
 * convergence, beta 717/1024, the Reno-friendly floor (tcp_friendliness), and HyStart's ACK
 * train and delay tests (Ha and Rhee, "Taming the Elephants", 2008). The kernel's selftest
 * tools/testing/selftests/bpf/progs/bpf_cubic.c showed what a BPF program must do
 * differently; differences from tcp_cubic.c are marked "BPF:".
 *
 * The module parameters of tcp_cubic.c are `const volatile` globals (.rodata): a loader sets
 * them by name before loading (libbpf skeleton, or the simulator's
 * `--cc cubic.bpf.o:beta=819`); the defaults are the kernel's.
 */
#include "tcp_ca.h"

char _license[] SEC("license") = "GPL";

#define BICTCP_BETA_SCALE 1024 /* beta is a fraction of 1024 */
#define BICTCP_HZ 10	       /* the cubic's time unit: 2^-10 s */

/* HyStart's two tests, bits of hystart_detect. */
#define HYSTART_ACK_TRAIN 0x1
#define HYSTART_DELAY 0x2

/* Delay test: 8 RTT samples per round, threshold delay_min/8 clamped to [4, 16] ms. */
#define HYSTART_MIN_SAMPLES 8
#define HYSTART_DELAY_MIN 4000U
#define HYSTART_DELAY_MAX 16000U
#define HYSTART_DELAY_THRESH(x) clamp(x, HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)

const volatile int fast_convergence = 1;
const volatile int beta = 717; /* = 717/1024 (BICTCP_BETA_SCALE) */
const volatile int initial_ssthresh = 0;
const volatile int bic_scale = 41; /* C = 41/1024 * 10 = 0.4 */
const volatile int tcp_friendliness = 1;
const volatile int hystart = 1;
const volatile int hystart_detect = HYSTART_ACK_TRAIN | HYSTART_DELAY;
const volatile int hystart_low_window = 16;
const volatile int hystart_ack_delta_us = 2000;
/*
 * BPF: the kernel's tick rate (CONFIG_HZ). tcp_cubic.c counts the cubic's time in jiffies; a
 * BPF program cannot read jiffies without bpf_jiffies64, which the simulator does not offer,
 * so here a jiffy is 1/hz s of bpf_ktime_get_ns(). 1000 by default; 250 as Debian builds.
 * Unsigned, as every divisor here: clang 14 has no signed division for BPF.
 */
const volatile __u32 hz = 1000;

/* struct bictcp of tcp_cubic.c, field for field, and one more (ack_stamp); renamed, as
 * vmlinux.h has the kernel's. */
struct bpf_bictcp {
	__u32 cnt;		/* increase cwnd by 1 after this many ACKed segments */
	__u32 last_max_cwnd;	/* last maximum snd_cwnd */
	__u32 last_cwnd;	/* the last snd_cwnd */
	__u32 last_time;	/* time when updated last_cwnd */
	__u32 bic_origin_point; /* origin point of the cubic function */
	__u32 bic_K;		/* time to origin point from the start of the epoch */
	__u32 delay_min;	/* min delay (usec) */
	__u32 epoch_start;	/* beginning of an epoch */
	__u32 ack_cnt;		/* number of ACKed segments */
	__u32 tcp_cwnd;		/* estimated Reno cwnd */
	__u16 unused;
	__u8 sample_cnt;	/* number of samples to decide curr_rtt */
	__u8 found;		/* the exit point is found? */
	__u32 round_start;	/* beginning of each round (usec) */
	__u32 end_seq;		/* end_seq of the round */
	__u32 last_ack;		/* last time when the ACK spacing is close (usec) */
	__u32 curr_rtt;		/* the minimum rtt of current round (usec) */
	__u32 ack_stamp;	/* BPF: jiffies of the last ACK (cwnd_event) */
};

/* BPF: tcp_jiffies32 (see hz above). */
static __always_inline __u32 jiffies32(void)
{
	return (__u32)(bpf_ktime_get_ns() / (NSEC_PER_SEC / (__u64)hz));
}

/* include/linux/jiffies.h, for an hz that divides 10^6: rounds up. */
static __always_inline __u32 usecs_to_jiffies(__u32 us)
{
	__u32 per_jiffy = USEC_PER_SEC / hz;

	return (us + per_jiffy - 1) / per_jiffy;
}

static __always_inline void bictcp_reset(struct bpf_bictcp *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->bic_origin_point = 0;
	ca->bic_K = 0;
	ca->delay_min = 0;
	ca->epoch_start = 0;
	ca->ack_cnt = 0;
	ca->tcp_cwnd = 0;
	ca->found = 0;
}

/* The ACK's time in microseconds, as tcp_cubic.c reads it. */
static __always_inline __u32 bictcp_clock_us(const struct sock *sk)
{
	return tcp_sk(sk)->tcp_mstamp;
}

/* A HyStart round starts: it ends when snd_una passes what is sent now. */
static __always_inline void bictcp_hystart_reset(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bpf_bictcp *ca = inet_csk_ca(sk);

	ca->round_start = ca->last_ack = bictcp_clock_us(sk);
	ca->end_seq = tp->snd_nxt;
	ca->curr_rtt = ~0U;
	ca->sample_cnt = 0;
}

SEC("struct_ops")
void BPF_PROG(cubic_init, struct sock *sk)
{
	struct bpf_bictcp *ca = inet_csk_ca(sk);

	bictcp_reset(ca);
	ca->ack_stamp = jiffies32();
	if (hystart)
		bictcp_hystart_reset(sk);
	if (!hystart && initial_ssthresh)
		tcp_sk(sk)->snd_ssthresh = initial_ssthresh;
}

/*
 * After an idle period, shift the epoch by it so that cwnd resumes the cubic curve where it
 * left it. BPF: tcp_cubic.c measures the idle time from the last send (tp->lsndtime, in the
 * kernel's jiffies, which this program cannot compare with its own clock); here it is
 * measured from the last ACK, which with nothing in flight came after the last send.
 */
SEC("struct_ops")
void BPF_PROG(cubic_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct bpf_bictcp *ca = inet_csk_ca(sk);
	__u32 now;
	__s32 delta;

	if (event != CA_EVENT_TX_START)
		return;
	now = jiffies32();
	delta = now - ca->ack_stamp;
	if (ca->epoch_start && delta > 0) {
		ca->epoch_start += delta;
		if (after(ca->epoch_start, now))
			ca->epoch_start = now;
	}
}

/* Bit number of the highest set bit, 1-based (include/asm-generic/bitops/fls64.h). */
static __always_inline __u32 fls64(__u64 x)
{
	__u32 n = 0;

	if (!x)
		return 0;
	if (x >> 32) {
		n += 32;
		x >>= 32;
	}
	if (x >> 16) {
		n += 16;
		x >>= 16;
	}
	if (x >> 8) {
		n += 8;
		x >>= 8;
	}
	if (x >> 4) {
		n += 4;
		x >>= 4;
	}
	if (x >> 2) {
		n += 2;
		x >>= 2;
	}
	if (x >> 1)
		n += 1;
	return n + 1;
}

/*
 * cbrt(x) MSB values for x MSB values in [0..63], by Willy Tarreau (tcp_cubic.c):
 * v = cbrt(x << 18) - 1, cbrt(x) = (v[x] + 10) >> 6.
 */
static const __u8 v[] = {
	0,   54,  54,  54,  118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156,
	157, 161, 164, 168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199,
	200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229,
	231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254,
};

/* The cube root as the kernel computes it: a table lookup, then one Newton-Raphson step. */
static __u32 cubic_root(__u64 a)
{
	__u32 x, b, shift;

	/* BPF: a < 64 where the kernel tests fls64(a) < 7 (the same), so that the verifier
	 * sees the index in bounds. */
	if (a < 64)
		return ((__u32)v[(__u32)a] + 35) >> 6;

	b = fls64(a);
	b = ((b * 84) >> 8) - 1;
	shift = (a >> (b * 3));
	/* BPF: never true (shift < 64 by construction); for the verifier's bounds check. */
	if (shift >= 64)
		return 0;

	x = ((__u32)(((__u32)v[shift] + 10) << b)) >> 6;
	/* x_{k+1} = (2 x_k + a / x_k^2) / 3, the division by 3 as * 341 >> 10 */
	x = (2 * x + (__u32)(a / ((__u64)x * (__u64)(x - 1))));
	x = ((x * 341) >> 10);
	return x;
}

/* ACKed segments per +1 of cwnd (ca->cnt), from the cubic function and the Reno estimate. */
static void bictcp_update(struct bpf_bictcp *ca, __u32 cwnd, __u32 acked)
{
	__u32 delta, bic_target, max_cnt, now = jiffies32();
	__u64 offs, t;

	ca->ack_cnt += acked; /* count the number of ACKed packets */

	if (ca->last_cwnd == cwnd && (__s32)(now - ca->last_time) <= (__s32)(hz / 32))
		return;

	/* The CUBIC function can update ca->cnt at most once per jiffy. On all cwnd reduction
	 * events, ca->epoch_start is set to 0, which forces a recalculation of ca->cnt. */
	if (ca->epoch_start && now == ca->last_time)
		goto tcp_friendliness;

	ca->last_cwnd = cwnd;
	ca->last_time = now;

	if (ca->epoch_start == 0) {
		ca->epoch_start = now; /* record beginning */
		ca->ack_cnt = acked;   /* start counting */
		ca->tcp_cwnd = cwnd;   /* sync with cubic */

		if (ca->last_max_cwnd <= cwnd) {
			ca->bic_K = 0;
			ca->bic_origin_point = cwnd;
		} else {
			/* K = cbrt((wmax - cwnd) / C) in 2^-10 s: cube_factor is
			 * 2^40 / (bic_scale * 10), tcp_cubic.c's cubictcp_register. */
			__u64 cube_factor = (1ULL << (10 + 3 * BICTCP_HZ)) / (bic_scale * 10);

			ca->bic_K = cubic_root(cube_factor * (ca->last_max_cwnd - cwnd));
			ca->bic_origin_point = ca->last_max_cwnd;
		}
	}

	/* t: time since the epoch began plus one minimum RTT, in 2^-10 s */
	t = (__s32)(now - ca->epoch_start);
	t += usecs_to_jiffies(ca->delay_min);
	t <<= BICTCP_HZ;
	t /= hz;

	if (t < ca->bic_K) /* t - K */
		offs = ca->bic_K - t;
	else
		offs = t - ca->bic_K;

	/* c/rtt * (t-K)^3, cube_rtt_scale = bic_scale * 10 */
	delta = ((__u64)(bic_scale * 10) * offs * offs * offs) >> (10 + 3 * BICTCP_HZ);
	if (t < ca->bic_K) /* below origin */
		bic_target = ca->bic_origin_point - delta;
	else /* above origin */
		bic_target = ca->bic_origin_point + delta;

	if (bic_target > cwnd)
		ca->cnt = cwnd / (bic_target - cwnd);
	else
		ca->cnt = 100 * cwnd; /* very small increment */

	/* The initial growth of cubic function may be too conservative when the available
	 * bandwidth is still unknown: at least 5% per RTT until the first loss. */
	if (ca->last_max_cwnd == 0 && ca->cnt > 20)
		ca->cnt = 20;

tcp_friendliness:
	/* TCP friendly: never slower than Reno with the same beta would be */
	if (tcp_friendliness) {
		__u32 scale = 8 * (__u32)(BICTCP_BETA_SCALE + beta) / 3 /
			      (__u32)(BICTCP_BETA_SCALE - beta);

		delta = (cwnd * scale) >> 3;
		/* BPF: tcp_cubic.c runs `while (ack_cnt > delta) { ack_cnt -= delta;
		 * tcp_cwnd++; }`; this is the same without a loop (the loop stops at
		 * ack_cnt == delta, hence the - 1). */
		if (delta && ca->ack_cnt > delta) {
			__u32 n = (ca->ack_cnt - 1) / delta;

			ca->ack_cnt -= n * delta;
			ca->tcp_cwnd += n;
		}

		if (ca->tcp_cwnd > cwnd) { /* if bic is slower than tcp */
			delta = ca->tcp_cwnd - cwnd;
			max_cnt = cwnd / delta;
			if (ca->cnt > max_cnt)
				ca->cnt = max_cnt;
		}
	}

	/* The maximum rate of cwnd increase CUBIC allows is 1 packet per 2 packets ACKed,
	 * meaning cwnd grows at 1.5x per RTT. */
	ca->cnt = max(ca->cnt, 2U);
}

SEC("struct_ops")
void BPF_PROG(cubic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bpf_bictcp *ca = inet_csk_ca(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;

	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	bictcp_update(ca, tp->snd_cwnd, acked);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(cubic_recalc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bpf_bictcp *ca = inet_csk_ca(sk);

	ca->epoch_start = 0; /* end of epoch */

	/* Wmax and fast convergence: a flow that lost below its last maximum releases some
	 * bandwidth to newcomers by remembering (1 + beta) / 2 of its cwnd. */
	if (tp->snd_cwnd < ca->last_max_cwnd && fast_convergence)
		ca->last_max_cwnd =
			(tp->snd_cwnd * (BICTCP_BETA_SCALE + beta)) / (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = tp->snd_cwnd;

	return max((tp->snd_cwnd * beta) / BICTCP_BETA_SCALE, 2U);
}

SEC("struct_ops")
void BPF_PROG(cubic_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss) {
		bictcp_reset(inet_csk_ca(sk));
		bictcp_hystart_reset(sk);
	}
}

/*
 * Account for TSO/GRO delays: a cushion of 4 GSO-sized packets at the pacing rate, at most
 * 1 ms, so that short-RTT flows do not leave slow start early.
 */
static __always_inline __u32 hystart_ack_delay(const struct sock *sk)
{
	unsigned long rate = sk->sk_pacing_rate;

	if (!rate)
		return 0;
	return min((__u64)USEC_PER_MSEC,
		   (__u64)sk->sk_gso_max_size * 4 * USEC_PER_SEC / rate);
}

static void hystart_update(struct sock *sk, __u32 delay)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bpf_bictcp *ca = inet_csk_ca(sk);
	__u32 threshold;

	if (after(tp->snd_una, ca->end_seq))
		bictcp_hystart_reset(sk);

	if (hystart_detect & HYSTART_ACK_TRAIN) {
		__u32 now = bictcp_clock_us(sk);

		/* first detection parameter: ACKs closer than hystart_ack_delta_us form a
		 * train; exit when a train lasts longer than delay_min / 2 */
		if ((__s32)(now - ca->last_ack) <= hystart_ack_delta_us) {
			ca->last_ack = now;

			threshold = ca->delay_min + hystart_ack_delay(sk);

			/* Pacing might have delayed packets up to RTT/2 during slow start. */
			if (sk->sk_pacing_status == SK_PACING_NONE)
				threshold >>= 1;

			if ((__s32)(now - ca->round_start) > threshold) {
				ca->found = 1;
				tp->snd_ssthresh = tp->snd_cwnd;
			}
		}
	}

	if (hystart_detect & HYSTART_DELAY) {
		/* obtain the minimum delay of more than sampling packets */
		if (ca->curr_rtt > delay)
			ca->curr_rtt = delay;
		if (ca->sample_cnt < HYSTART_MIN_SAMPLES) {
			ca->sample_cnt++;
		} else if (ca->curr_rtt >
			   ca->delay_min + HYSTART_DELAY_THRESH(ca->delay_min >> 3)) {
			ca->found = 1;
			tp->snd_ssthresh = tp->snd_cwnd;
		}
	}
}

SEC("struct_ops")
void BPF_PROG(cubic_acked, struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bpf_bictcp *ca = inet_csk_ca(sk);
	__u32 delay, now = jiffies32();

	ca->ack_stamp = now;

	/* Some calls are for duplicates without timestamps */
	if (sample->rtt_us < 0)
		return;

	/* Discard delay samples right after fast recovery */
	if (ca->epoch_start && (__s32)(now - ca->epoch_start) < (__s32)hz)
		return;

	delay = sample->rtt_us;
	if (delay == 0)
		delay = 1;

	/* first time call or link delay decreases */
	if (ca->delay_min == 0 || ca->delay_min > delay)
		ca->delay_min = delay;

	/* hystart triggers when cwnd is larger than some threshold */
	if (!ca->found && tcp_in_slow_start(tp) && hystart &&
	    tp->snd_cwnd >= (__u32)hystart_low_window)
		hystart_update(sk, delay);
}

SEC("struct_ops")
__u32 BPF_PROG(cubic_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bpf_cubic = {
	.init = (void *)cubic_init,
	.ssthresh = (void *)cubic_recalc_ssthresh,
	.cong_avoid = (void *)cubic_cong_avoid,
	.set_state = (void *)cubic_state,
	.undo_cwnd = (void *)cubic_undo_cwnd,
	.cwnd_event = (void *)cubic_cwnd_event,
	.pkts_acked = (void *)cubic_acked,
	.name = "bpf_cubic",
};
