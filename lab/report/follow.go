package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/coopcc/coopcc/lab/analysis"
)

var followHeader = []string{"run", "at_s", "from", "to", "agents", "followed", "lag_median_s", "lag_max_s", "until_s"}

// followRows is every run's changes of N (analysis.FollowN), one row each.
func followRows(runs []analysis.Run) [][]string {
	var rows [][]string
	for _, r := range runs {
		for _, c := range analysis.FollowN(r) {
			rows = append(rows, []string{r.Info.ID, fmtS(c.At), strconv.Itoa(c.From), strconv.Itoa(c.To),
				strconv.Itoa(c.Agents), strconv.Itoa(c.Followed()), fmtS(analysis.Percentile(c.Lags, 50)),
				fmtS(c.MaxLag()), fmtS(c.Until)})
		}
	}
	return rows
}

// fmtS formats seconds to the millisecond ("" for NaN: nothing to say).
func fmtS(s float64) string {
	if math.IsNaN(s) {
		return ""
	}
	return strconv.FormatFloat(s, 'f', 3, 64)
}

// WriteFollowTable prints, per group of runs (a scenario point over its
// repetitions), how fast the agents' bounds followed the number of
// terminals sending: the changes of N, the share of (agent, change) pairs
// that followed before the next change, and the median, 90th percentile
// and largest lag over them. Groups without agents are left out.
func WriteFollowTable(w io.Writer, runs []analysis.Run) error {
	type group struct {
		changes, pairs int
		lags           []float64
	}
	groups := map[string]*group{}
	var order []string
	for _, r := range runs {
		cs := analysis.FollowN(r)
		if len(cs) == 0 {
			continue
		}
		key := analysis.GroupKey(r.Info)
		g := groups[key]
		if g == nil {
			g = &group{}
			groups[key] = g
			order = append(order, key)
		}
		for _, c := range cs {
			g.changes++
			g.pairs += c.Agents
			g.lags = append(g.lags, c.Lags...)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tCHANGES_OF_N\tFOLLOWED\tLAG_MEDIAN_S\tLAG_P90_S\tLAG_MAX_S")
	for _, key := range order {
		g := groups[key]
		fmt.Fprintf(tw, "%s\t%d\t%d/%d\t%s\t%s\t%s\n", key, g.changes, len(g.lags), g.pairs,
			fmtLag(analysis.Percentile(g.lags, 50)), fmtLag(analysis.Percentile(g.lags, 90)), fmtLag(analysis.Percentile(g.lags, 100)))
	}
	return tw.Flush()
}

// fmtLag prints a lag in seconds, "-" when there is none.
func fmtLag(s float64) string {
	if math.IsNaN(s) {
		return "-"
	}
	return strconv.FormatFloat(s, 'f', 1, 64)
}
