/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared definitions of the coopcc BPF programs: the bounds map (keyed by
 * destination, IPv4 as IPv4-mapped IPv6), the heartbeat/lease config and the
 * per-destination counters. Both backends (struct_ops and sockops) use the
 * same layout so that the Go side writes them the same way.
 */
#ifndef COOPCC_COMMON_H
#define COOPCC_COMMON_H

/* Bounds in segments. lo 0 = no lower bound, hi 0 = no upper bound.
 * restart_ns (CLOCK_MONOTONIC, 0 = none) asks the struct_ops backend to
 * restart the kernel's CUBIC of every connection to the destination that
 * existed before that time, once, as a new connection starts: its state
 * reset and a slow start (coopcc_cubic.c; the sockops backend ignores it). */
struct coopcc_bounds {
	__u32 lo;
	__u32 hi;
	__u64 restart_ns;
};

/* Destination address, IPv4 as ::ffff:a.b.c.d. The all-zero key is the
 * host-wide default entry. */
struct coopcc_key {
	__u8 addr[16];
};

/* Written by userspace. heartbeat_ns is CLOCK_MONOTONIC (bpf_ktime_get_ns);
 * bounds are ignored when now - heartbeat_ns > lease_ns (fail-open). */
struct coopcc_config {
	__u64 heartbeat_ns;
	__u64 lease_ns;
};

/* How often each bound changed cwnd, and how many connections restarted
 * on request, per destination (per-CPU). */
struct coopcc_counters {
	__u64 lo_applied;
	__u64 hi_applied;
	__u64 restarts;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct coopcc_key);
	__type(value, struct coopcc_bounds);
} coopcc_bnd SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct coopcc_config);
} coopcc_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct coopcc_key);
	__type(value, struct coopcc_counters);
} coopcc_cnt SEC(".maps");

/* coopcc_live reports whether the userspace heartbeat is within its lease. */
static __always_inline int coopcc_live(void)
{
	__u32 zero = 0;
	struct coopcc_config *cfg = bpf_map_lookup_elem(&coopcc_cfg, &zero);

	if (!cfg || cfg->heartbeat_ns == 0)
		return 0;
	return bpf_ktime_get_ns() - cfg->heartbeat_ns <= cfg->lease_ns;
}

/* coopcc_lookup returns the bounds for key (destination), falling back to
 * the default entry (all-zero key), or NULL. */
static __always_inline struct coopcc_bounds *coopcc_lookup(struct coopcc_key *key)
{
	struct coopcc_key def = {};
	struct coopcc_bounds *b = bpf_map_lookup_elem(&coopcc_bnd, key);

	if (b)
		return b;
	return bpf_map_lookup_elem(&coopcc_bnd, &def);
}

/* coopcc_remote_key fills key with a sockops connection's remote address
 * (IPv4 as ::ffff:a.b.c.d); key must be zeroed. */
static __always_inline void coopcc_remote_key(struct bpf_sock_ops *skops, struct coopcc_key *key)
{
	if (skops->family == 2 /* AF_INET */) {
		__u32 a = skops->remote_ip4;

		key->addr[10] = 0xff;
		key->addr[11] = 0xff;
		__builtin_memcpy(&key->addr[12], &a, 4);
	} else {
		__u32 a[4];

		a[0] = skops->remote_ip6[0];
		a[1] = skops->remote_ip6[1];
		a[2] = skops->remote_ip6[2];
		a[3] = skops->remote_ip6[3];
		__builtin_memcpy(key->addr, a, 16);
	}
}

/* Which counter coopcc_count adds to. */
enum coopcc_counter {
	COOPCC_HI_APPLIED = 0,
	COOPCC_LO_APPLIED = 1,
	COOPCC_RESTARTS = 2,
};

static __always_inline void coopcc_count(struct coopcc_key *key, int which)
{
	struct coopcc_counters *c = bpf_map_lookup_elem(&coopcc_cnt, key);

	if (!c) {
		struct coopcc_counters zero = {};

		bpf_map_update_elem(&coopcc_cnt, key, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&coopcc_cnt, key);
		if (!c)
			return;
	}
	if (which == COOPCC_LO_APPLIED)
		c->lo_applied++;
	else if (which == COOPCC_RESTARTS)
		c->restarts++;
	else
		c->hi_applied++;
}

#endif
