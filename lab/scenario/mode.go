package scenario

import (
	"fmt"
	"strings"

	"github.com/coopcc/coopcc/policy"
)

// Mode is one way of running the terminals that a scenario compares.
type Mode struct {
	Name    string `json:"name"`     // canonical name, used in run ids ("cubic", "coop", "ap-priority")
	Kind    string `json:"kind"`     // "kernel", "policy" or "ap"
	CC      string `json:"cc"`       // congestion control of the terminals (managed ones: the agent's datapath)
	Policy  string `json:"policy"`   // policy name the agents run (kind policy)
	APQueue string `json:"ap_queue"` // AP queue mode override (kind ap), else ""
}

// Mode kinds.
const (
	KindKernel = "kernel" // no middleware, the kernel's CC on every managed terminal (the unmanaged keep theirs)
	KindPolicy = "policy" // the agent with a policy on every managed terminal
	KindAP     = "ap"     // no middleware, an AP-side alternative in the emulator
)

var kernelCCs = []string{"cubic", "bbr", "reno"}

// policyNames are the policies the agent can run.
var policyNames = policy.Names()

// apModes maps AP-side alternatives to the emulator's AP queue mode.
var apModes = map[string]string{
	"ap-priority": "priority", // AP with higher channel-access priority (802.11e AIFS/CWmin)
	"ap-rr":       "rr",       // per-station round robin at the AP
}

// PolicyNames returns the policies a mode can name.
func PolicyNames() []string { return append([]string(nil), policyNames...) }

func isPolicy(name string) bool { return contains(policyNames, name) }

// KnownModes lists every mode name a scenario may use.
func KnownModes() []string {
	out := append([]string(nil), kernelCCs...)
	out = append(out, policyNames...)
	out = append(out, "ap-priority", "ap-rr")
	return out
}

// ParseMode parses a mode: a kernel CC ("cubic", "bbr", "reno"), a policy
// run through the agent ("coop" or "policy:coop"), or an AP-side
// alternative ("ap-priority", "ap-rr").
func ParseMode(s string) (Mode, error) {
	name := strings.TrimSpace(s)
	if p, ok := strings.CutPrefix(name, "policy:"); ok {
		if !isPolicy(p) {
			return Mode{}, fmt.Errorf("mode %q: unknown policy %q (known: %s)", s, p, strings.Join(policyNames, ", "))
		}
		name = p
	}
	switch {
	case contains(kernelCCs, name):
		return Mode{Name: name, Kind: KindKernel, CC: name}, nil
	case isPolicy(name):
		return Mode{Name: name, Kind: KindPolicy, CC: "cubic", Policy: name}, nil
	}
	if q, ok := apModes[name]; ok {
		return Mode{Name: name, Kind: KindAP, CC: "cubic", APQueue: q}, nil
	}
	return Mode{}, fmt.Errorf("mode %q: unknown (known: %s; a policy may also be written policy:NAME)", s, strings.Join(KnownModes(), ", "))
}
