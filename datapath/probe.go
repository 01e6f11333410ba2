package datapath

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"
)

// Capabilities says which backend this kernel supports and, if one is
// missing, why.
type Capabilities struct {
	Backend   string   // "struct_ops", "sockops" or "none"
	StructOps bool     // struct_ops tcp_congestion_ops with the CUBIC kfuncs
	Sockops   bool     // cgroup sockops with TCP_BPF_SNDCWND_CLAMP
	Receive   bool     // the receive side (OpenReceive): sockops with TCP_WINDOW_CLAMP
	Missing   []string // human-readable, one entry per missing piece
}

func (c Capabilities) missingText() string {
	if len(c.Missing) == 0 {
		return "nothing reported missing"
	}
	return strings.Join(c.Missing, "; ")
}

// String is a one-line summary.
func (c Capabilities) String() string {
	s := "backend " + c.Backend
	if len(c.Missing) > 0 {
		s += " (missing: " + c.missingText() + ")"
	}
	return s
}

// cubicKfuncs are the CUBIC functions coopcc_cubic calls.
var cubicKfuncs = []string{"cubictcp_init", "cubictcp_cong_avoid", "cubictcp_recalc_ssthresh", "cubictcp_state", "cubictcp_cwnd_event", "cubictcp_acked", "tcp_reno_undo_cwnd"}

// Probe checks the running kernel: privileges, BTF, struct_ops, the CUBIC
// kfuncs (by loading the programs, which is the only reliable test: before
// Linux 6.10 they are kfuncs on x86 only), cgroup v2 and sockops.
func Probe() Capabilities {
	var c Capabilities
	if unix.Geteuid() != 0 {
		c.Missing = append(c.Missing, "not running as root (BPF needs CAP_BPF and CAP_NET_ADMIN)")
		c.Backend = BackendNone
		return c
	}
	c.StructOps = probeStructOps(&c.Missing)
	c.Sockops = probeSockops(&c.Missing)
	c.Receive = c.Sockops && tryLoad(loadRcvwnd, "rcvwnd object", "sockops program with the per-segment header-option callback (Linux >= 5.10) for receive bounds", &c.Missing)
	switch {
	case c.StructOps:
		c.Backend = BackendStructOps
	case c.Sockops:
		c.Backend = BackendSockops
	default:
		c.Backend = BackendNone
	}
	return c
}

func probeStructOps(missing *[]string) bool {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		*missing = append(*missing, "kernel BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF) for struct_ops")
		return false
	}
	if err := features.HaveMapType(ebpf.StructOpsMap); err != nil {
		*missing = append(*missing, fmt.Sprintf("BPF struct_ops maps (%v)", err))
		return false
	}
	kspec, err := btf.LoadKernelSpec()
	if err != nil {
		*missing = append(*missing, fmt.Sprintf("readable kernel BTF (%v)", err))
		return false
	}
	var st *btf.Struct
	if err := kspec.TypeByName("bpf_struct_ops_tcp_congestion_ops", &st); err != nil {
		*missing = append(*missing, "struct_ops for tcp_congestion_ops (CONFIG_BPF_JIT, Linux >= 5.6)")
		return false
	}
	ok := true
	for _, name := range cubicKfuncs {
		var fn *btf.Func
		if err := kspec.TypeByName(name, &fn); err != nil {
			*missing = append(*missing, fmt.Sprintf("function %s in kernel BTF (CUBIC built in or loaded?)", name))
			ok = false
		}
	}
	if !ok {
		return false
	}
	return tryLoad(loadCubic, "coopcc_cubic object", "CUBIC kfuncs callable from struct_ops (Linux >= 6.10, or x86)", missing)
}

// tryLoad loads (and releases) one embedded BPF collection to prove the
// kernel accepts it; on failure it records what is missing: the object
// itself (what) or the kernel support it needs (need).
func tryLoad(load func() (*ebpf.CollectionSpec, error), what, need string, missing *[]string) bool {
	spec, err := load()
	if err != nil {
		*missing = append(*missing, fmt.Sprintf("%s (%v)", what, err))
		return false
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		*missing = append(*missing, fmt.Sprintf("%s: load failed: %v", need, firstLine(err)))
		return false
	}
	coll.Close()
	return true
}

func probeSockops(missing *[]string) bool {
	if !haveCgroup2() {
		*missing = append(*missing, "cgroup v2 (CONFIG_CGROUPS with cgroup2 in /proc/filesystems) for the sockops fallback")
		return false
	}
	if err := features.HaveProgramType(ebpf.SockOps); err != nil {
		*missing = append(*missing, fmt.Sprintf("BPF sockops programs (%v)", err))
		return false
	}
	return tryLoad(loadSockops, "sockops object", "sockops program with sk storage and netns cookie (Linux >= 5.15)", missing)
}

func firstLine(err error) string {
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		return ve.Error()
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
