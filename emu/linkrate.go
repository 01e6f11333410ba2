package emu

import "github.com/coopcc/coopcc/emu/dcf"

// rateMeter turns the stations' cumulative per-rate frame counters
// (dcf.Stats.RateTotals) into the frame-weighted mean PHY rate of each interval
// between two updates, as a Wi-Fi driver reports its current tx bitrate.
type rateMeter struct {
	sum    []float64 // per station: Σ rate·frames at the previous update
	frames []uint64  // per station: Σ frames at the previous update
	mean   []float64 // per station: the last interval's mean rate (0 before any frame)
}

// update records station i's cumulative totals and returns the mean rate of
// the frames delivered since the previous update; with none delivered it
// returns the previous interval's mean (0 before the first frame).
func (m *rateMeter) update(i int, sum float64, frames uint64) float64 {
	if df := frames - m.frames[i]; df > 0 {
		m.mean[i] = (sum - m.sum[i]) / float64(df)
	}
	m.sum[i], m.frames[i] = sum, frames
	return m.mean[i]
}

// updateNodes updates every station from its node's counters and returns
// the per-station means (index i is stas[i]). The slice is the meter's own:
// it changes at the next call.
func (m *rateMeter) updateNodes(stas []*dcf.Node) []float64 {
	if len(m.mean) != len(stas) {
		m.sum, m.frames, m.mean = make([]float64, len(stas)), make([]uint64, len(stas)), make([]float64, len(stas))
	}
	for i, n := range stas {
		sum, frames := n.Stats.RateTotals()
		m.update(i, sum, frames)
	}
	return m.mean
}
