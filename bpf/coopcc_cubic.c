// SPDX-License-Identifier: GPL-2.0
/*
 * coopcc_cubic: the kernel's own CUBIC, bounded from outside.
 *
 * A struct_ops tcp_congestion_ops whose every callback delegates to CUBIC
 * through its kfuncs (Linux >= 6.10 on all architectures, x86 earlier) and
 * then keeps snd_cwnd within [lo, hi] read from the bounds map (per
 * destination, with a default entry). ssthresh is never set below lo. A
 * restart request in the bounds restarts CUBIC once per connection
 * (restart_if_asked).
 * Bounds are ignored once the userspace heartbeat is older than the lease,
 * so a dead agent leaves plain CUBIC behind (fail-open).
 *
 * Where the kernel writes snd_cwnd outside these callbacks and how each place
 * is handled is documented in docs/datapath.md.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "common.h"

char _license[] SEC("license") = "GPL";

#define AF_INET 2
#define TCP_CONG_NON_RESTRICTED 0x1

extern void cubictcp_init(struct sock *sk) __ksym;
extern void cubictcp_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 cubictcp_recalc_ssthresh(struct sock *sk) __ksym;
extern void cubictcp_state(struct sock *sk, __u8 new_state) __ksym;
extern void cubictcp_cwnd_event(struct sock *sk, enum tcp_ca_event event) __ksym;
extern void cubictcp_acked(struct sock *sk, const struct ack_sample *sample) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

static __always_inline void sk_key(struct sock *sk, struct coopcc_key *k)
{
	if (sk->__sk_common.skc_family == AF_INET) {
		__u32 a = sk->__sk_common.skc_daddr;

		k->addr[10] = 0xff;
		k->addr[11] = 0xff;
		__builtin_memcpy(&k->addr[12], &a, 4);
	} else {
		struct in6_addr a = sk->__sk_common.skc_v6_daddr;

		__builtin_memcpy(k->addr, &a, 16);
	}
}

/* bounds_for returns the live bounds for sk's destination, or NULL. */
static __always_inline struct coopcc_bounds *bounds_for(struct sock *sk, struct coopcc_key *key)
{
	if (!coopcc_live())
		return 0;
	sk_key(sk, key);
	return coopcc_lookup(key);
}

/* clamp_to keeps snd_cwnd within the bounds b of key (looked up by the
 * caller). */
static __always_inline void clamp_to(struct sock *sk, struct coopcc_bounds *b, struct coopcc_key *key)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u32 cwnd, lo, hi;

	lo = b->lo;
	hi = b->hi;
	cwnd = tp->snd_cwnd;
	if (hi && cwnd > hi) {
		tp->snd_cwnd = hi;
		coopcc_count(key, COOPCC_HI_APPLIED);
	} else if (lo && cwnd < lo) {
		tp->snd_cwnd = lo;
		coopcc_count(key, COOPCC_LO_APPLIED);
	}
	/* CUBIC's HyStart (cubictcp_acked) sets ssthresh = cwnd directly, not
	 * through .ssthresh: in Recovery, where PRR may have put cwnd below
	 * lo and cwnd < ssthresh reads as slow start, that was lo - 1 in
	 * TestLowerBoundAcrossLossBurst. ssthresh is never left below lo. */
	if (lo && tp->snd_ssthresh < lo)
		tp->snd_ssthresh = lo;
}

/* clamp keeps snd_cwnd within the live bounds. */
static __always_inline void clamp(struct sock *sk)
{
	struct coopcc_key key = {};
	struct coopcc_bounds *b = bounds_for(sk, &key);

	if (b)
		clamp_to(sk, b, &key);
}

/* TCP_INFINITE_SSTHRESH: ssthresh of a connection in its first slow start. */
#define COOPCC_INFINITE_SSTHRESH 0x7fffffff

/* When this connection last (re)started (CLOCK_MONOTONIC): a restart
 * request in the bounds map newer than that applies to it, once. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} coopcc_started SEC(".maps");

/* restart_if_asked restarts the kernel's CUBIC as a new connection would
 * start — its state reset (cubictcp_init: no last maximum, a new epoch,
 * HyStart armed) and a slow start — when the bounds b of key ask for it
 * after this connection (re)started (docs/datapath.md, "Restart on
 * request"; no shipped policy asks today). */
static __always_inline void restart_if_asked(struct sock *sk, struct coopcc_bounds *b, struct coopcc_key *key)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u64 *started;

	if (!b->restart_ns)
		return;
	started = bpf_sk_storage_get(&coopcc_started, sk, 0, 0);
	if (!started || *started >= b->restart_ns)
		return;
	*started = b->restart_ns;
	cubictcp_init(sk);
	tp->snd_ssthresh = COOPCC_INFINITE_SSTHRESH;
	coopcc_count(key, COOPCC_RESTARTS);
}

SEC("struct_ops/coopcc_init")
void BPF_PROG(coopcc_init, struct sock *sk)
{
	__u64 *started = bpf_sk_storage_get(&coopcc_started, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);

	if (started)
		*started = bpf_ktime_get_ns();
	cubictcp_init(sk);
	clamp(sk);
}

SEC("struct_ops/coopcc_ssthresh")
__u32 BPF_PROG(coopcc_ssthresh, struct sock *sk)
{
	__u32 ssthresh = cubictcp_recalc_ssthresh(sk);
	struct coopcc_key key = {};
	struct coopcc_bounds *b = bounds_for(sk, &key);

	if (b && b->lo && ssthresh < b->lo) {
		ssthresh = b->lo;
		coopcc_count(&key, COOPCC_LO_APPLIED);
	}
	return ssthresh;
}

SEC("struct_ops/coopcc_cong_avoid")
void BPF_PROG(coopcc_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct coopcc_key key = {};
	struct coopcc_bounds *b = bounds_for(sk, &key); /* once per ACK: both steps use it */

	if (b)
		restart_if_asked(sk, b, &key);
	cubictcp_cong_avoid(sk, ack, acked);
	if (b)
		clamp_to(sk, b, &key);
}

SEC("struct_ops/coopcc_set_state")
void BPF_PROG(coopcc_set_state, struct sock *sk, __u8 new_state)
{
	cubictcp_state(sk, new_state);
	/* tcp_enter_loss sets cwnd = in_flight + 1 just before this call. */
	clamp(sk);
}

SEC("struct_ops/coopcc_cwnd_event")
void BPF_PROG(coopcc_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	cubictcp_cwnd_event(sk, ev);
	clamp(sk);
}

SEC("struct_ops/coopcc_pkts_acked")
void BPF_PROG(coopcc_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	cubictcp_acked(sk, sample);
	clamp(sk);
}

SEC("struct_ops/coopcc_undo_cwnd")
__u32 BPF_PROG(coopcc_undo_cwnd, struct sock *sk)
{
	__u32 cwnd = tcp_reno_undo_cwnd(sk);
	struct coopcc_key key = {};
	struct coopcc_bounds *b = bounds_for(sk, &key);

	if (!b)
		return cwnd;
	if (b->hi && cwnd > b->hi) {
		cwnd = b->hi;
		coopcc_count(&key, COOPCC_HI_APPLIED);
	} else if (b->lo && cwnd < b->lo) {
		cwnd = b->lo;
		coopcc_count(&key, COOPCC_LO_APPLIED);
	}
	return cwnd;
}

/* The name is rewritten by the loader (coopcc_ + 8 hex digits) so that
 * several instances can be registered at once. NON_RESTRICTED lets network
 * namespaces other than the initial one make it their default. */
SEC(".struct_ops.link")
struct tcp_congestion_ops coopcc_cubic = {
	.init = (void *)coopcc_init,
	.ssthresh = (void *)coopcc_ssthresh,
	.cong_avoid = (void *)coopcc_cong_avoid,
	.set_state = (void *)coopcc_set_state,
	.cwnd_event = (void *)coopcc_cwnd_event,
	.pkts_acked = (void *)coopcc_pkts_acked,
	.undo_cwnd = (void *)coopcc_undo_cwnd,
	.flags = TCP_CONG_NON_RESTRICTED,
	.name = "coopcc_cubic",
};
