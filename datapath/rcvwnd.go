package datapath

import (
	"errors"
	"fmt"
)

// BackendReceive is the receive side: windows advertised to remote
// senders, not congestion windows (OpenReceive).
const BackendReceive = "rcvwnd"

// OpenReceive loads the receive-side datapath (bpf/rcvwnd.c) for the
// namespace opts.Netns: for every connection of the namespace, the window
// this host advertises is clamped to Hi × MSS bytes, Hi read from the bounds
// set for the connection's remote address (the sender of a download) or the
// default entry. Lo is not enforceable on the receive side and must be 0.
//
// Only Netns and Lease of opts are used. Like the sockops backend it is a
// cgroup sockops program attached with BPF_PROG_ATTACH, so it outlives a
// SIGKILLed agent and gives every window back to the kernel's autotuning
// once the lease lapses (on the next segment the connection sends). It sees
// connections established after it is attached. One receive instance per
// namespace; it can run beside a send-side Datapath of the same namespace.
func OpenReceive(opts Options) (*Datapath, error) {
	if opts.Lease == 0 {
		opts.Lease = DefaultLease
	}
	if opts.Lease < 0 {
		return nil, fmt.Errorf("lease %v: must be positive", opts.Lease)
	}
	d, err := openReceive(opts)
	if err != nil {
		return nil, err
	}
	d.lease = opts.Lease
	if err := d.Heartbeat(); err != nil {
		_ = d.Close()
		return nil, err
	}
	return d, nil
}

func openReceive(opts Options) (*Datapath, error) {
	spec, err := sockopsSpec(loadRcvwnd, "rcvwnd", opts.Netns)
	if err != nil {
		return nil, err
	}
	var objs rcvwndObjects
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return nil, fmt.Errorf("load the receive-window program (needs bpf_setsockopt(TCP_WINDOW_CLAMP) in sockops, Linux 6.0+): %w", explainLoadError(err))
	}
	if err := primeHeartbeat(objs.CoopccCfg, opts.Lease); err != nil {
		_ = objs.Close()
		return nil, err
	}
	detach, err := attachSockops(objs.CoopccRcvwnd)
	if err != nil {
		_ = objs.Close()
		return nil, err
	}
	d := &Datapath{
		backend:  BackendReceive,
		receive:  true,
		bounds:   objs.CoopccBnd,
		config:   objs.CoopccCfg,
		counters: objs.CoopccCnt,
		objIDs:   collectIDs(objs.CoopccBnd, objs.CoopccCfg, objs.CoopccCnt, objs.CoopccRcvst, objs.CoopccRcvwnd),
	}
	d.closeFn = func() error { return errors.Join(detach(), objs.Close()) }
	return d, nil
}
