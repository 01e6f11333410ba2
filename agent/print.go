package agent

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// PrintStatus writes the human-readable form of `coopcc agent status`.
func PrintStatus(w io.Writer, r StatusReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	on := "off"
	if r.PolicyOn {
		on = "bounding"
	}
	if r.Mode != "" {
		on += ", " + r.Mode
	}
	if n := r.Counts.CompetingEntries; n > 0 {
		on += fmt.Sprintf(", competed %d times", n)
		if m := r.Counts.CompetingReversals; m > 0 {
			on += fmt.Sprintf(" (%d ended for not paying)", m)
		}
	}
	fmt.Fprintf(tw, "interface\t%s\tgroup %s\n", r.Iface, r.Group)
	fmt.Fprintf(tw, "policy\t%s (%s)\t%s\n", r.Policy, on, r.Reason)
	fmt.Fprintf(tw, "datapath backend\t%s\t\n", r.Backend)
	fmt.Fprintf(tw, "N (active terminals)\t%d\tlive peers %d\n", r.N, len(r.Peers))
	if r.Guard != nil {
		fmt.Fprintf(tw, "guard\t%s\t%s (cost %.1f%%, %d probes, %d disables)\n", r.Guard.State, r.Guard.Reason, 100*r.Guard.Cost, r.Guard.Probes, r.Guard.Disables)
	} else {
		fmt.Fprintf(tw, "guard\toff\t\n")
	}
	fmt.Fprintf(tw, "last tick\t%s\t%v, %d ticks, errors monitor %d datapath %d policy %d\n", r.LastTick.Format(time.RFC3339Nano),
		time.Duration(r.TickTimeUs)*time.Microsecond, r.Counts.Ticks, r.Counts.MonitorErrors, r.Counts.DatapathErrors, r.Counts.PolicyPanics)
	if r.LastError != "" {
		fmt.Fprintf(tw, "last error\t%s\t\n", r.LastError)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nBOUNDS")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DST\tLO\tHI")
	for _, b := range r.Bounds {
		d := b.Dst
		if d == "" {
			d = "default"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\n", d, b.Lo, b.Hi)
	}
	tw.Flush()

	if len(r.Hits) > 0 {
		fmt.Fprintln(w, "\nBOUND HITS (datapath counters)")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "DST\tLO HITS\tHI HITS\tRESTARTS")
		for _, h := range r.Hits {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", h.Dst, h.LoHits, h.HiHits, h.Restarts)
		}
		tw.Flush()
	}

	fmt.Fprintln(w, "\nPEERS")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SENDER\tFLOWS\tCWND\tSRTT\tMIN RTT\tRATE Mbit/s\tLO\tHI\tPOLICY")
	for _, p := range append([]PeerReport{r.Own}, r.Peers...) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%.2f\t%d\t%d\t%s\n", p.Sender, p.ActiveFlows, p.Cwnd, usString(p.SRTTUs),
			usString(p.MinRTTUs), float64(p.DeliveryRate)*8/1e6, p.Lo, p.Hi, p.Policy)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nFLOWS")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SRC\tDST\tCWND\tLO\tHI\tSRTT\tMIN RTT\tRATE Mbit/s\tACTIVE")
	for _, f := range r.Flows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%.2f\t%v\n", f.Src, f.Dst, f.Cwnd, f.Lo, f.Hi, usString(f.SRTTUs),
			usString(f.MinRTTUs), float64(f.Rate)*8/1e6, f.Active)
	}
	tw.Flush()
}
