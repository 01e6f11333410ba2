// SPDX-License-Identifier: GPL-2.0
// tcpprobe: one ring-buffer record per tcp:tcp_probe event (every segment,
// i.e. every ACK on a sender, that reaches tcp_rcv_established) of the
// sockets selected by the config map: network-namespace cookie and port.
// Used by `coopcc mon --trace` (package monitor, Tracer).
//go:build ignore

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

struct config {
	__u64 netns_cookie; // 0 = every namespace
	__u16 port;         // host order; 0 = every port (local or remote)
	__u16 pad[3];
};

struct event {
	__u64 ts_ns;        // bpf_ktime_get_ns (CLOCK_MONOTONIC)
	__u64 sock_cookie;
	__u64 bytes_acked;
	__u8 saddr[16];     // IPv4 in the first 4 bytes when family == AF_INET
	__u8 daddr[16];
	__u16 sport;        // host order
	__u16 dport;        // host order
	__u16 family;
	__u16 pad;
	__u32 snd_cwnd;
	__u32 snd_ssthresh;
	__u32 srtt_us;      // smoothed RTT in microseconds (tp->srtt_us >> 3)
	__u32 snd_una;
	__u32 snd_nxt;
	__u32 rcv_wnd;
	__u32 snd_wnd;
	__u32 mss_cache;
	__u32 packets_out;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct config);
} config_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dropped SEC(".maps");

// Keep the event type in the object's BTF for bpf2go.
const struct event *unused_event __attribute__((unused));

SEC("tp_btf/tcp_probe")
int BPF_PROG(on_tcp_probe, struct sock *sk, struct sk_buff *skb)
{
	__u32 zero = 0;
	struct config *cfg = bpf_map_lookup_elem(&config_map, &zero);
	if (!cfg)
		return 0;
	if (cfg->netns_cookie) {
		struct net *net = BPF_CORE_READ(sk, __sk_common.skc_net.net);
		if (BPF_CORE_READ(net, net_cookie) != cfg->netns_cookie)
			return 0;
	}
	__u16 sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	__u16 dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (cfg->port && cfg->port != sport && cfg->port != dport)
		return 0;

	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__u64 *d = bpf_map_lookup_elem(&dropped, &zero);
		if (d)
			__sync_fetch_and_add(d, 1);
		return 0;
	}
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	e->ts_ns = bpf_ktime_get_ns();
	e->sock_cookie = bpf_get_socket_cookie(sk);
	e->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	e->sport = sport;
	e->dport = dport;
	e->pad = 0;
	if (e->family == 2 /* AF_INET */) {
		__builtin_memset(e->saddr, 0, sizeof(e->saddr));
		__builtin_memset(e->daddr, 0, sizeof(e->daddr));
		BPF_CORE_READ_INTO((__u32 *)e->saddr, sk, __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO((__u32 *)e->daddr, sk, __sk_common.skc_daddr);
	} else {
		BPF_CORE_READ_INTO(e->saddr, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8);
		BPF_CORE_READ_INTO(e->daddr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	}
	e->snd_cwnd = BPF_CORE_READ(tp, snd_cwnd);
	e->snd_ssthresh = BPF_CORE_READ(tp, snd_ssthresh);
	e->srtt_us = BPF_CORE_READ(tp, srtt_us) >> 3;
	e->snd_una = BPF_CORE_READ(tp, snd_una);
	e->snd_nxt = BPF_CORE_READ(tp, snd_nxt);
	e->rcv_wnd = BPF_CORE_READ(tp, rcv_wnd);
	e->snd_wnd = BPF_CORE_READ(tp, snd_wnd);
	e->mss_cache = BPF_CORE_READ(tp, mss_cache);
	e->packets_out = BPF_CORE_READ(tp, packets_out);
	e->bytes_acked = BPF_CORE_READ(tp, bytes_acked);
	bpf_ringbuf_submit(e, 0);
	return 0;
}
