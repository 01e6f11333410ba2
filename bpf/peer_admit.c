// SPDX-License-Identifier: GPL-2.0
/*
 * coopcc_peer_admit: the peer socket's admission filter. A socket filter
 * (SO_ATTACH_BPF) on the agent's peer-protocol UDP socket that decides, in
 * the kernel's receive path and before the datagram is queued, whether the
 * agent reads it at all:
 *
 *  - a datagram from a source address the agent authenticated recently
 *    (the "known" map, written by user space after a message from that
 *    address passed its MAC and freshness checks) is always queued;
 *  - any other datagram is queued while the budget for unknown sources
 *    lasts (unknown_limit datagrams per window_ns, all unknown sources
 *    together) and dropped after that.
 *
 * Why: under a flood every queued datagram costs the agent a copy, a free
 * and an HMAC (≈ 2 µs here). Dropped at enqueue, it costs the agent
 * nothing (the receive path runs in softirq, not in the agent's process).
 * Known peers are never dropped, so a flood can slow a new peer's joining
 * (its first message must win a place in the budget) but cannot silence a
 * peer already heard. A flood that forges a known peer's source address
 * passes the filter and costs what it cost without it.
 *
 * The budget's window is reset without a lock: two CPUs that reset it at
 * once admit a few datagrams too many, which is harmless.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char _license[] SEC("license") = "GPL";

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD

/* Source address, IPv4 as ::ffff:a.b.c.d. */
struct peer_addr {
	__u8 addr[16];
};

/* Value: CLOCK_MONOTONIC (bpf_ktime_get_ns) time until which the source
 * counts as known. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct peer_addr);
	__type(value, __u64);
} coopcc_known SEC(".maps");

/* The budget for unknown sources: limits are written by user space, the
 * window state by this program. */
struct admit_state {
	__u64 window_ns;     /* config: length of a budget window */
	__u64 unknown_limit; /* config: unknown datagrams admitted per window */
	__u64 window_start;  /* state */
	__u64 used;          /* state: unknown datagrams admitted this window */
	__u64 dropped;       /* state: unknown datagrams dropped, all time */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct admit_state);
} coopcc_admit SEC(".maps");

static __always_inline int source_of(struct __sk_buff *skb, struct peer_addr *a)
{
	__builtin_memset(a, 0, sizeof(*a));
	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		a->addr[10] = 0xff;
		a->addr[11] = 0xff;
		return bpf_skb_load_bytes_relative(skb, 12, &a->addr[12], 4, BPF_HDR_START_NET);
	}
	if (skb->protocol == bpf_htons(ETH_P_IPV6))
		return bpf_skb_load_bytes_relative(skb, 8, a->addr, 16, BPF_HDR_START_NET);
	return -1;
}

SEC("socket")
int coopcc_peer_admit(struct __sk_buff *skb)
{
	struct peer_addr src;
	__u32 zero = 0;
	__u64 now = bpf_ktime_get_ns();

	if (source_of(skb, &src) == 0) {
		__u64 *until = bpf_map_lookup_elem(&coopcc_known, &src);
		if (until && *until > now)
			return skb->len;
	}
	struct admit_state *st = bpf_map_lookup_elem(&coopcc_admit, &zero);
	if (!st || st->window_ns == 0)
		return skb->len; /* not configured: admit everything */
	if (now - st->window_start > st->window_ns) {
		st->window_start = now;
		st->used = 0;
	}
	if (__sync_fetch_and_add(&st->used, 1) < st->unknown_limit)
		return skb->len;
	__sync_fetch_and_add(&st->dropped, 1);
	return 0;
}
