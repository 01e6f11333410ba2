package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/coopcc/coopcc/lab/analysis"
)

var ratesHeader = []string{"run", "station", "rate_control", "rate_mbps", "attempts", "successes", "frames", "airtime_s"}

// rateRows is every run's rates.csv, prefixed with the run id.
func rateRows(runs []analysis.Run) [][]string {
	var rows [][]string
	for _, r := range runs {
		if r.Emu == nil {
			continue
		}
		for _, x := range r.Emu.Rates {
			rows = append(rows, []string{r.Info.ID, x.Station, x.RateControl, strconv.FormatFloat(x.RateMbps, 'g', -1, 64),
				strconv.FormatUint(x.Attempts, 10), strconv.FormatUint(x.Successes, 10), strconv.FormatUint(x.Frames, 10),
				strconv.FormatFloat(x.AirtimeS, 'f', 3, 64)})
		}
	}
	return rows
}

// WriteRateTable prints, per run and node, the rate controller, the mean
// PHY rate of the delivered frames, the share of acknowledged attempts and
// the histogram of delivered frames by rate (rates.csv of the emulator).
func WriteRateTable(w io.Writer, runs []analysis.Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tNODE\tRATE_CONTROL\tMEAN_RATE_MBPS\tACKED_%\tFRAMES_BY_RATE (Mbps:%)")
	for _, r := range runs {
		if r.Emu == nil {
			continue
		}
		type node struct {
			ctl             string
			att, ok, frames uint64
			sum             float64
			byRate          map[float64]uint64
		}
		nodes := map[string]*node{}
		var order []string
		for _, x := range r.Emu.Rates {
			n := nodes[x.Station]
			if n == nil {
				n = &node{ctl: x.RateControl, byRate: map[float64]uint64{}}
				nodes[x.Station] = n
				order = append(order, x.Station)
			}
			n.att += x.Attempts
			n.ok += x.Successes
			n.frames += x.Frames
			n.sum += x.RateMbps * float64(x.Frames)
			n.byRate[x.RateMbps] += x.Frames
		}
		for _, name := range order {
			n := nodes[name]
			mean, acked := 0.0, 0.0
			if n.frames > 0 {
				mean = n.sum / float64(n.frames)
			}
			if n.att > 0 {
				acked = 100 * float64(n.ok) / float64(n.att)
			}
			var rates []float64
			for k := range n.byRate {
				rates = append(rates, k)
			}
			sort.Sort(sort.Reverse(sort.Float64Slice(rates)))
			var hist []string
			for _, k := range rates {
				if n.frames > 0 && n.byRate[k] > 0 {
					hist = append(hist, fmt.Sprintf("%g:%.0f", k, 100*float64(n.byRate[k])/float64(n.frames)))
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.0f\t%s\n", r.Info.ID, name, n.ctl, mean, acked, strings.Join(hist, " "))
		}
	}
	return tw.Flush()
}
