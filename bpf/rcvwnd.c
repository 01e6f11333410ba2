// SPDX-License-Identifier: GPL-2.0
/*
 * coopcc_rcvwnd: the receive side. A cgroup sockops program that bounds
 * what a remote sender may have in flight towards this host by the window
 * this host advertises: tp->window_clamp is set with
 * bpf_setsockopt(TCP_WINDOW_CLAMP) to hi * mss bytes, hi read from the same
 * bounds map layout as the send side (bpf/common.h), keyed by the REMOTE
 * address (the sender of the download). lo is ignored: a receiver cannot
 * make a sender send more.
 *
 * When: on every segment this host sends on a connection (its ACKs), in the
 * BPF_SOCK_OPS_HDR_OPT_LEN_CB callback, enabled per connection with
 * BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG; no option space is reserved, so the
 * header is unchanged. The callback runs in tcp_established_options(),
 * before __tcp_transmit_skb() selects the window, so the clamp applies to
 * the very ACK being built. The kernel's receive-buffer autotuning raises
 * window_clamp when it grows the buffer; the program notices (the clamp it
 * read back differs from what it set) and sets it again. A raise opens the
 * clamp until the kernel has grown the window to the new bound (see apply).
 *
 * Fail-open: once the lease has lapsed (or the bound is removed), the next
 * segment sent restores the clamp the connection had before the first bound
 * (or the socket's current receive buffer, if autotuning grew it since), so
 * autotuning takes over again. TCP never shrinks an advertised window, so a
 * smaller clamp takes effect as data arrives, without loss.
 *
 * cgroup sockops programs see every socket of the cgroup tree, in every
 * network namespace; netns_cookie restricts this instance to one namespace.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "common.h"

char _license[] SEC("license") = "GPL";

#define SOL_SOCKET 1
#define SOL_TCP 6
#define SO_RCVBUF 8
#define TCP_WINDOW_CLAMP 10
#define TCP_ESTABLISHED 1
/* Far above any window (2^30 bytes: the largest a 14-bit scale allows). */
#define MAX_WINDOW (1 << 30)

/* 0 = every namespace. */
const volatile __u64 netns_cookie = 0;

/* Per-connection state: the bound in force (0 = none), the clamp the
 * connection had before the first bound, the clamp the kernel held after
 * this program last set it, and, while a raise is under way, the clamp to
 * set once the window has grown to it (0 = none). */
struct rcv_state {
	__u32 hi;
	__u32 orig;
	__u32 held;
	__u32 target;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct rcv_state);
} coopcc_rcvst SEC(".maps");

static __always_inline int get_clamp(struct bpf_sock_ops *skops)
{
	int v = 0;

	if (bpf_getsockopt(skops, SOL_TCP, TCP_WINDOW_CLAMP, &v, sizeof(v)))
		return -1;
	return v;
}

/* open_clamp is the clamp of an unbounded connection: the one it had
 * before its first bound, or its receive buffer if autotuning grew it. */
static __always_inline int open_clamp(struct bpf_sock_ops *skops, struct rcv_state *st)
{
	int v = st->orig, rcvbuf = 0;

	if (bpf_getsockopt(skops, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) == 0 && rcvbuf > v)
		v = rcvbuf;
	return v;
}

/* release gives the window back to the kernel's autotuning. */
static __always_inline void release(struct bpf_sock_ops *skops, struct rcv_state *st)
{
	int v = open_clamp(skops, st);

	if (bpf_setsockopt(skops, SOL_TCP, TCP_WINDOW_CLAMP, &v, sizeof(v)) == 0) {
		st->hi = 0;
		st->target = 0;
	}
}

/* grown says whether the window the kernel offers (rcv_ssthresh) has
 * reached want bytes. */
static __always_inline int grown(struct bpf_sock *sk, __u64 want)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	return !tp || tp->rcv_ssthresh >= want;
}

/* set_clamp sets the clamp to v and records what the kernel holds. */
static __always_inline int set_clamp(struct bpf_sock_ops *skops, struct rcv_state *st, int v)
{
	if (bpf_setsockopt(skops, SOL_TCP, TCP_WINDOW_CLAMP, &v, sizeof(v)))
		return -1;
	st->held = (__u32)get_clamp(skops);
	return 0;
}

static __always_inline void apply(struct bpf_sock_ops *skops)
{
	struct coopcc_key key = {};
	struct coopcc_bounds *b;
	struct bpf_sock *sk = skops->sk;
	struct rcv_state *st;
	__u32 hi = 0, mss;
	__u64 want;
	int cur;

	if (!sk || skops->state != TCP_ESTABLISHED)
		return;
	st = bpf_sk_storage_get(&coopcc_rcvst, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	coopcc_remote_key(skops, &key);
	if (coopcc_live()) {
		b = coopcc_lookup(&key);
		if (b)
			hi = b->hi;
	}
	if (hi == 0) {
		if (st->hi)
			release(skops, st);
		return;
	}
	cur = get_clamp(skops);
	if (cur < 0)
		return;
	mss = skops->mss_cache ? skops->mss_cache : 536;
	want = (__u64)hi * mss;
	if (want > MAX_WINDOW)
		want = MAX_WINDOW;
	if (st->target) {
		/* Raising: the clamp is open and the kernel grows the window;
		 * bound it again once it reaches the target. */
		if (st->hi == hi && !grown(sk, st->target))
			return;
		st->target = 0;
		st->held = 0; /* whatever the kernel holds now, set the bound */
	}
	if (st->hi == 0)
		st->orig = cur;
	else if (st->hi == hi && (__u32)cur == st->held)
		return; /* in force, untouched by autotuning */
	if (st->hi && want > st->held && !grown(sk, want)) {
		/* A raise. Raising the clamp above the window the connection
		 * offers does not grow the window on Linux 6.18: rcv_ssthresh
		 * stays where it was, and while it is under the clamp every
		 * segment is ACKed at once (docs/datapath.md). Opening the
		 * clamp lets the kernel grow the window as it does unbounded
		 * (two segments per segment received), and the bound is set
		 * again at the first segment sent after it has grown. */
		if (set_clamp(skops, st, open_clamp(skops, st)) == 0) {
			st->hi = hi;
			st->target = (__u32)want;
			coopcc_count(&key, COOPCC_HI_APPLIED);
		}
		return;
	}
	if (set_clamp(skops, st, (int)want))
		return;
	st->hi = hi;
	coopcc_count(&key, COOPCC_HI_APPLIED);
}

SEC("sockops")
int coopcc_rcvwnd(struct bpf_sock_ops *skops)
{
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		if (netns_cookie && bpf_get_netns_cookie(skops) != netns_cookie)
			return 1;
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		apply(skops);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		apply(skops);
		break;
	}
	return 1;
}
