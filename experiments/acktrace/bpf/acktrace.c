// SPDX-License-Identifier: GPL-2.0
/*
 * acktrace: a diagnostic, not part of coopcc. Records a bulk TCP receiver's
 * state at every data segment it gets (tp_btf/tcp_probe, before the segment
 * is processed) and at every read (tp_btf/tcp_rcv_space_adjust), so that
 * one can tell which segments were ACKed at once and in which state the
 * receiver was (docs/datapath.md, "Raising a bound"). Sockets that have
 * received less than 1 MB are skipped (control connections).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* One record; experiments/acktrace/main.go decodes the same layout. */
struct ack_rec {
	__u64 ts_ns;
	__u64 sock;          /* the socket's address: a per-run identity */
	__u32 rcv_ssthresh;
	__u32 window_clamp;
	__u32 rcv_wnd;
	__u32 unacked;       /* rcv_nxt - rcv_wup: received since the last ACK */
	__u32 seg_len;       /* 0 for a read */
	__u16 tcp_flags;     /* the segment's; 0 for a read */
	__u8 event;          /* 0 segment, 1 read */
	__u8 quick;          /* icsk_ack.quick */
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} events SEC(".maps");

static __always_inline int record(struct sock *sk, const struct sk_buff *skb, __u8 event)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	struct ack_rec *r;

	if (!tp || tp->bytes_received < 1000000 || (skb && skb->len < 200))
		return 0;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r)
		return 0;
	r->ts_ns = bpf_ktime_get_ns();
	r->sock = (__u64)sk;
	r->rcv_ssthresh = tp->rcv_ssthresh;
	r->window_clamp = tp->window_clamp;
	r->rcv_wnd = tp->rcv_wnd;
	r->unacked = tp->rcv_nxt - tp->rcv_wup;
	r->seg_len = skb ? skb->len : 0;
	r->tcp_flags = skb ? ((struct tcp_skb_cb *)&skb->cb[0])->tcp_flags : 0;
	r->event = event;
	r->quick = tp->inet_conn.icsk_ack.quick;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(on_segment, struct sock *sk, const struct sk_buff *skb)
{
	return record(sk, skb, 0);
}

SEC("tp_btf/tcp_rcv_space_adjust")
int BPF_PROG(on_read, struct sock *sk)
{
	return record(sk, 0, 1);
}
