// SPDX-License-Identifier: GPL-2.0
/*
 * coopcc_sockops: the fallback backend for kernels without struct_ops or
 * without the CUBIC kfuncs. A cgroup sockops program that keeps each
 * connection's snd_cwnd_clamp at the upper bound with
 * bpf_setsockopt(TCP_BPF_SNDCWND_CLAMP) (which also sets ssthresh to it).
 * Upper bound only: the kernel caps cwnd at the clamp on the next
 * cwnd-limited ACK. Lower bounds cannot be expressed this way.
 *
 * cgroup sockops programs see every socket of the cgroup tree, in every
 * network namespace; netns_cookie restricts this instance to one namespace.
 * Only connections established after attach are seen (the program enables
 * the per-ACK RTT callback when a connection is established).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "common.h"

char _license[] SEC("license") = "GPL";

#define SOL_TCP 6
#define TCP_BPF_SNDCWND_CLAMP 1002
/* TCP_INFINITE_SSTHRESH: the value meaning "no clamp". */
#define UNCLAMPED 0x7fffffff

/* 0 = every namespace. */
const volatile __u64 netns_cookie = 0;

/* The clamp this program last set on the socket (0 = never set). */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} coopcc_skclamp SEC(".maps");

static __always_inline void apply(struct bpf_sock_ops *skops)
{
	struct coopcc_key key = {};
	struct coopcc_bounds *b = 0;
	struct bpf_sock *sk = skops->sk;
	__u32 *applied;
	int want = UNCLAMPED;

	if (!sk)
		return;
	applied = bpf_sk_storage_get(&coopcc_skclamp, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!applied)
		return;
	if (coopcc_live()) {
		coopcc_remote_key(skops, &key);
		b = coopcc_lookup(&key);
		if (b && b->hi)
			want = b->hi;
	}
	if (*applied == (__u32)want)
		return;
	if (*applied == 0 && want == UNCLAMPED) {
		/* Never clamped: nothing to undo (and keep ssthresh). */
		*applied = want;
		return;
	}
	if (bpf_setsockopt(skops, SOL_TCP, TCP_BPF_SNDCWND_CLAMP, &want, sizeof(want)) == 0) {
		*applied = want;
		if (want != UNCLAMPED)
			coopcc_count(&key, COOPCC_HI_APPLIED);
	}
}

SEC("sockops")
int coopcc_sockops(struct bpf_sock_ops *skops)
{
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		if (netns_cookie && bpf_get_netns_cookie(skops) != netns_cookie)
			return 1;
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_RTT_CB_FLAG);
		apply(skops);
		break;
	case BPF_SOCK_OPS_RTT_CB:
		apply(skops);
		break;
	}
	return 1;
}
