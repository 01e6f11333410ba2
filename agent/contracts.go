package agent

// The agent's names for the other packages' contract types (BRIEF.md), so
// that the loop reads the same whether it runs against the real parts or the
// in-memory ones of the unit tests.

import (
	"github.com/coopcc/coopcc/datapath"
	"github.com/coopcc/coopcc/monitor"
	"github.com/coopcc/coopcc/peer"
	"github.com/coopcc/coopcc/policy"
)

type (
	// Flow is one TCP flow from the monitor.
	Flow = monitor.Flow
	// DPBounds are the bounds the datapath holds for one destination.
	DPBounds = datapath.Bounds
	// DPCounters count how often the datapath applied each bound.
	DPCounters = datapath.Counters
	// FlowView, PeerView, View, PBounds, Decision and Policy are the policy's.
	FlowView = policy.FlowView
	PeerView = policy.PeerView
	View     = policy.View
	PBounds  = policy.Bounds
	Decision = policy.Decision
	Policy   = policy.Policy
	// PeerStatus is what a terminal broadcasts about itself.
	PeerStatus = peer.Status
)
