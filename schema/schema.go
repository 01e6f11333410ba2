// Package schema holds the records that one part of coopcc writes and
// another reads, so that each format has one definition: the agent's bound
// event (written by package agent into its events file, read by the lab's
// analysis from bounds/<station>.jsonl).
//
// The package is a leaf: it imports only the standard library, so the pure
// analysis code can use it without pulling in BPF, netlink or namespaces.
package schema

import "time"

// BoundEvent is one change of a bound the agent applies, one JSON line of
// its events file: {"t":"RFC3339Nano","dst":"","lo":0,"hi":17,"n":3,
// "policy":"coop","mode":"cooperative","reason":"..."}. Dst "" is the
// host-wide default entry, otherwise the destination address; Lo and Hi are
// segments, 0 meaning no bound; N is the number of active terminals at that
// moment; Mode is the policy's mode with these bounds (policy.Mode: coop's
// "cooperative" or "competing"; absent when the policy names none or control
// is off).
type BoundEvent struct {
	T      time.Time `json:"t"`
	Dst    string    `json:"dst"`
	Lo     uint32    `json:"lo"`
	Hi     uint32    `json:"hi"`
	N      int       `json:"n"`
	Policy string    `json:"policy"`
	Mode   string    `json:"mode,omitempty"`
	Reason string    `json:"reason"`
}
