package datapath

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"time"
)

// ClampConfig is a manual bound (the `coopcc clamp` command).
type ClampConfig struct {
	Options
	Dst    netip.Addr // invalid = host-wide default
	Bounds Bounds
}

// Validate checks a manual bound before anything is loaded.
func (c ClampConfig) Validate() error {
	if c.Bounds.Hi == 0 && c.Bounds.Lo == 0 {
		return fmt.Errorf("no bound given: set --max N (and optionally --min M), N >= 1")
	}
	return c.Bounds.Validate()
}

// RunClamp opens the datapath, sets the bound, refreshes the lease every
// lease/3 until ctx is done, then prints the counters and restores
// everything. Progress goes to w.
func RunClamp(ctx context.Context, c ClampConfig, w io.Writer) (err error) {
	if err := c.Validate(); err != nil {
		return err
	}
	dp, err := Open(c.Options)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := dp.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("restore: %w", cerr)
		}
		if err == nil {
			fmt.Fprintln(w, "restored")
		}
	}()
	if dp.Backend() == BackendSockops && c.Bounds.Lo > 0 {
		return fmt.Errorf("--min %d: the sockops backend enforces upper bounds only (use a kernel with struct_ops and the CUBIC kfuncs, or drop --min)", c.Bounds.Lo)
	}
	if err := dp.Set(c.Dst, c.Bounds); err != nil {
		return err
	}
	dst := "default"
	if c.Dst.IsValid() {
		dst = c.Dst.String()
	}
	ns := c.Netns
	if ns == "" {
		ns = "(current)"
	}
	fmt.Fprintf(w, "backend %s cc %s netns %s dst %s lo %d hi %d lease %v\n",
		dp.Backend(), orDash(dp.CCName()), ns, dst, c.Bounds.Lo, c.Bounds.Hi, dp.Lease())
	if sw := dp.Switched(); sw.Switched+sw.Failed > 0 {
		fmt.Fprintf(w, "switched %d existing connections (%d failed)\n", sw.Switched, sw.Failed)
	}
	tk := time.NewTicker(dp.Lease() / 3)
	defer tk.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tk.C:
			if err := dp.Heartbeat(); err != nil {
				return err
			}
		}
	}
	counters, err := dp.Counters()
	if err != nil {
		return err
	}
	printCounters(w, counters)
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func printCounters(w io.Writer, c map[netip.Addr]Counters) {
	addrs := make([]netip.Addr, 0, len(c))
	for a := range c {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].Less(addrs[j]) })
	fmt.Fprintf(w, "%-40s %12s %12s\n", "dst", "lo_applied", "hi_applied")
	for _, a := range addrs {
		fmt.Fprintf(w, "%-40s %12d %12d\n", a, c[a].LoApplied, c[a].HiApplied)
	}
}
