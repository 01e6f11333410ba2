package report

import (
	"sort"
	"strconv"

	"github.com/coopcc/coopcc/lab/analysis"
)

// model is what the figures are drawn from.
type model struct {
	runs    []analysis.Run
	sums    []analysis.RunSummary // sums[i] summarizes runs[i]
	groups  []analysis.GroupSummary
	series  map[string]int // line label → style index, stable across figures
	nextIdx int
}

func (m *model) styleOf(label string) int {
	if i, ok := m.series[label]; ok {
		return i
	}
	m.series[label] = m.nextIdx
	m.nextIdx++
	return m.series[label]
}

// variant is a group's key without mode, n and delay: what else the sweep varied.
func variant(key string) string { return analysis.Variant(key) }

// lineLabel names the line a group belongs to in "vs N" figures.
func lineLabel(g analysis.GroupSummary) string {
	if v := variant(g.Key); v != "" {
		return g.Mode + " " + v
	}
	return g.Mode
}

func delayLabel(d float64) string {
	return "wired delay " + strconv.FormatFloat(d, 'g', -1, 64) + " ms"
}

func (m *model) delays() []float64 {
	seen := map[float64]bool{}
	var ds []float64
	for _, g := range m.groups {
		if !seen[g.DelayMS] {
			seen[g.DelayMS] = true
			ds = append(ds, g.DelayMS)
		}
	}
	sort.Float64s(ds)
	return ds
}

// figures builds every figure the results support.
func (m *model) figures() ([]*figure, error) {
	var out []*figure
	add := func(f *figure, err error) error {
		if err != nil {
			return err
		}
		if f != nil {
			out = append(out, f)
		}
		return nil
	}
	ns := map[int]bool{}
	for _, g := range m.groups {
		if g.ValidRuns > 0 {
			ns[g.N] = true
		}
	}
	if len(ns) >= 2 {
		if err := add(m.vsN("throughput_vs_n", "Total throughput vs number of terminals", "total goodput (Mbit/s)",
			func(g analysis.GroupSummary) analysis.Stat { return g.AggregateMbps })); err != nil {
			return nil, err
		}
		if err := add(m.vsN("jain_vs_n", "Jain fairness vs number of terminals", "Jain fairness index",
			func(g analysis.GroupSummary) analysis.Stat { return g.Jain })); err != nil {
			return nil, err
		}
	} else if err := add(m.byMode()); err != nil {
		return nil, err
	}
	for _, build := range []func() (*figure, error){m.throughputVsRTT, m.coexistence, m.fairnessScatter, m.lossScatter} {
		if err := add(build()); err != nil {
			return nil, err
		}
	}
	for _, i := range m.traceRuns() {
		if err := add(m.traces(i)); err != nil {
			return nil, err
		}
	}
	if err := add(m.airtime(m.traceRuns())); err != nil {
		return nil, err
	}
	for _, c := range m.lossRuns() {
		if err := add(m.lossTrace(c.run, c.station)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
