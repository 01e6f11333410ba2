// SPDX-License-Identifier: GPL-2.0
/*
 * coopcc_switch_cc: a BPF TCP iterator that moves the TCP sockets of one
 * network namespace (the namespace the iterator is opened in) whose
 * congestion control is from_cc or from_cc2 (empty = unused) to to_cc with
 * bpf_setsockopt(TCP_CONGESTION).
 * Full sockets only (established, listening and the other full states);
 * request and TIME_WAIT sockets have no congestion control.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

#define SOL_TCP 6
#define TCP_CONGESTION 13
#define CC_NAME_MAX 16

const volatile char from_cc[CC_NAME_MAX] = {};
const volatile char from_cc2[CC_NAME_MAX] = {};
const volatile char to_cc[CC_NAME_MAX] = {};

__u64 switched = 0;
__u64 failed = 0;

static __always_inline int name_eq(const char *a, const volatile char *b)
{
	int i;

#pragma unroll
	for (i = 0; i < CC_NAME_MAX; i++) {
		if (a[i] != b[i])
			return 0;
		if (a[i] == 0)
			return 1;
	}
	return 1;
}

SEC("iter/tcp")
int coopcc_switch_cc(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	char cur[CC_NAME_MAX] = {};
	char to[CC_NAME_MAX] = {};
	struct tcp_sock *tp;
	int i;

	if (!skc)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;
	if (bpf_getsockopt(tp, SOL_TCP, TCP_CONGESTION, cur, sizeof(cur)))
		return 0;
	if (!name_eq(cur, from_cc) && !(from_cc2[0] && name_eq(cur, from_cc2)))
		return 0;
#pragma unroll
	for (i = 0; i < CC_NAME_MAX; i++)
		to[i] = to_cc[i];
	if (bpf_setsockopt(tp, SOL_TCP, TCP_CONGESTION, to, sizeof(to)))
		__sync_fetch_and_add(&failed, 1);
	else
		__sync_fetch_and_add(&switched, 1);
	return 0;
}
