package monitor

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
)

// WriteTable writes flows as an aligned text table sorted by throughput
// (rates[i] in bytes/s belongs to flows[i]), highest first.
func WriteTable(w io.Writer, flows []Flow, rates []float64) error {
	idx := make([]int, len(flows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rates[idx[a]] > rates[idx[b]] })
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SRC\tDST\tSTATE\tCC\tTHRU Mbit/s\tCWND\tSSTHRESH\tSRTT ms\tMINRTT ms\tCA\tRETR\tLOST\tUNACKED\tDELIV Mbit/s\tIFACE\t")
	for _, i := range idx {
		f := &flows[i]
		ss := "-"
		if f.Ssthresh < 1<<30 {
			ss = fmt.Sprint(f.Ssthresh)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f\t%d\t%s\t%.2f\t%.2f\t%s\t%d\t%d\t%d\t%.2f\t%s\t\n",
			f.Src, f.Dst, StateName(f.State), f.CC, rates[i]*8/1e6, f.Cwnd, ss,
			float64(f.SRTT.Microseconds())/1e3, float64(f.MinRTT.Microseconds())/1e3,
			CAStateName(f.CAState), f.TotalRetrans, f.Lost, f.Unacked,
			float64(f.DeliveryRate)*8/1e6, f.Iface)
	}
	return tw.Flush()
}
