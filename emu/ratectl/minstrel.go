package ratectl

import (
	"math/rand/v2"

	"github.com/coopcc/coopcc/emu/des"
)

// Minstrel's constants. The controller follows Linux mac80211's legacy
// Minstrel (net/mac80211/rc80211_minstrel.c as of Linux 3.x, the 2012-era
// kernels; ns-3's MinstrelWifiManager is a port of it and uses the same
// defaults).
const (
	// MinstrelUpdateInterval: statistics are folded into the EWMA every
	// 100 ms (Linux update_interval 100 ms; ns-3 UpdateStatistics 100 ms).
	MinstrelUpdateInterval = 100 * des.Millisecond
	// MinstrelEWMALevel: weight of the old success probability, percent
	// (Linux ewma_level 75; ns-3 EWMA 75).
	MinstrelEWMALevel = 75
	// MinstrelLookAround: percent of frames used for sampling with
	// multi-rate retry (Linux lookaround_rate_mrr 10; ns-3 LookAroundRate 10).
	MinstrelLookAround = 10
	// MinstrelSegment: time budget of one retry-chain stage, counting
	// backoff (Linux segment_size 6000 µs; ns-3 the same computation).
	MinstrelSegment = 6000 * des.Microsecond
	// MinstrelMaxRetry: attempts per stage at most (Linux max_retry's
	// default 7 when the driver gives none).
	MinstrelMaxRetry = 7
	// MinstrelSampleColumns: columns of the random sampling table (Linux
	// SAMPLE_COLUMNS 10).
	MinstrelSampleColumns = 10
)

// minstrelRate is one rate's statistics (Linux struct minstrel_rate).
type minstrelRate struct {
	att, succ   uint64   // current window
	prob        float64  // EWMA of the success probability, 0..1
	tp          float64  // prob / perfect time (per second)
	perfect     des.Time // medium time of one successful attempt
	retry       int      // attempts that fit the segment budget
	adjRetry    int      // retry, halved (≤ 2) when prob < 10 % or > 95 %
	sampleLimit int      // -1 unlimited
}

type stage struct{ idx, count int }

// Minstrel is a sampling rate controller with a four-stage multi-rate retry
// chain, after Linux's legacy Minstrel:
//
//   - every 100 ms, each rate's success ratio in the window is folded into
//     an EWMA (75 % old), and its throughput estimated as EWMA probability /
//     attempt time; the best-throughput, second-best and best-probability
//     rates are picked;
//   - each frame's chain is [best throughput, second best, best probability,
//     lowest rate], each stage with as many attempts as fit 6 ms of medium
//     time including backoff (at most 7, at most 2 when the rate's
//     probability is below 10 % or above 95 %);
//   - about 10 % of frames sample a rate from a random permutation table: a
//     rate faster than the current best goes first in the chain, a slower
//     one second (it then counts half, "sample_deferred").
//
// The state starts zeroed as Linux's does (kzalloc): all three picks are
// the lowest rate until the first update, and sampling finds the others.
// The retry chain, not the medium's retry limit, decides when a frame is
// dropped, as in Linux and ns-3.
type Minstrel struct {
	rates []float64
	r     []minstrelRate

	maxTp, maxTp2, maxProb int
	nextUpdate             des.Time

	packets, samples, deferred int
	table                      [][]int // [column] -> permutation of rate indices
	row, col                   int

	chain []stage
	total int // attempts in the chain
	rng   *rand.Rand
}

// NewMinstrel builds a Minstrel controller for the link.
func NewMinstrel(p Params) *Minstrel {
	m := &Minstrel{rates: p.Rates, r: make([]minstrelRate, len(p.Rates)), rng: rand.New(rand.NewPCG(p.Seed, 0x6d696e))}
	for i, rate := range p.Rates {
		mr := &m.r[i]
		mr.perfect = p.AttemptTime(rate)
		mr.sampleLimit = -1
		// Linux minstrel_rate_init: add attempts while the stage (first
		// attempt + each retry's ACK, data and mean backoff) fits the segment.
		cw := p.CWMin
		tx := mr.perfect
		mr.retry = 1
		for {
			tx += mr.perfect + des.Time(cw)*p.Slot/2
			cw = min(2*cw+1, p.CWMax)
			if tx >= MinstrelSegment {
				break
			}
			mr.retry++
			if mr.retry >= MinstrelMaxRetry {
				break
			}
		}
		mr.adjRetry = mr.retry
	}
	for range MinstrelSampleColumns {
		m.table = append(m.table, m.rng.Perm(len(p.Rates)))
	}
	m.nextUpdate = MinstrelUpdateInterval
	return m
}

// Rate implements Controller. Attempt 0 starts a new frame: statistics are
// updated when due and the frame's retry chain is built.
func (m *Minstrel) Rate(now des.Time, attempt int) float64 {
	if attempt == 0 {
		m.maybeUpdate(now)
		m.buildChain()
	}
	for _, s := range m.chain {
		if attempt < s.count {
			return m.rates[s.idx]
		}
		attempt -= s.count
	}
	return m.rates[m.chain[len(m.chain)-1].idx]
}

// Retry implements Controller: the chain's attempts.
func (m *Minstrel) Retry(attempt int) bool { return attempt == 0 || attempt < m.total }

// Report implements Controller.
func (m *Minstrel) Report(now des.Time, rate float64, ok bool) {
	mr := &m.r[index(m.rates, rate)]
	mr.att++
	if ok {
		mr.succ++
	}
	m.maybeUpdate(now)
}

// Chain returns the current frame's retry chain as (rate, attempts) pairs.
func (m *Minstrel) Chain() [][2]float64 {
	out := make([][2]float64, len(m.chain))
	for i, s := range m.chain {
		out[i] = [2]float64{m.rates[s.idx], float64(s.count)}
	}
	return out
}

// Best returns the current best-throughput, second-best and
// best-probability rates.
func (m *Minstrel) Best() (tp, tp2, prob float64) {
	return m.rates[m.maxTp], m.rates[m.maxTp2], m.rates[m.maxProb]
}

// Probability returns the EWMA success probability of rate.
func (m *Minstrel) Probability(rate float64) float64 { return m.r[index(m.rates, rate)].prob }

// buildChain is Linux minstrel_get_rate with multi-rate retry.
func (m *Minstrel) buildChain() {
	n := len(m.rates)
	m.packets++
	delta := m.packets*MinstrelLookAround/100 - (m.samples + m.deferred/2)
	first := m.maxTp
	second := m.maxTp2
	if delta > 0 {
		if m.packets >= 10000 {
			m.packets, m.samples, m.deferred = 0, 0, 0
		} else if delta > 2*n {
			m.samples += delta - 2*n
		}
		s := m.nextSample()
		if m.r[s].perfect > m.r[m.maxTp].perfect {
			// Slower than the best: sample in the second stage.
			m.deferred++
			second = s
		} else if m.r[s].sampleLimit != 0 {
			m.samples++
			if m.r[s].sampleLimit > 0 {
				m.r[s].sampleLimit--
			}
			first, second = s, m.maxTp
		}
	}
	m.chain = append(m.chain[:0],
		stage{first, m.r[first].adjRetry},
		stage{second, m.r[second].adjRetry},
		stage{m.maxProb, m.r[m.maxProb].adjRetry},
		stage{0, m.r[0].adjRetry})
	m.total = 0
	for _, s := range m.chain {
		m.total += s.count
	}
}

func (m *Minstrel) nextSample() int {
	s := m.table[m.col][m.row]
	m.row++
	if m.row >= len(m.rates) {
		m.row = 0
		m.col = (m.col + 1) % MinstrelSampleColumns
	}
	return s
}

func (m *Minstrel) maybeUpdate(now des.Time) {
	if now < m.nextUpdate {
		return
	}
	for now >= m.nextUpdate {
		m.nextUpdate += MinstrelUpdateInterval
	}
	m.update()
}

// update is Linux minstrel_update_stats.
func (m *Minstrel) update() {
	for i := range m.r {
		mr := &m.r[i]
		if mr.att > 0 {
			cur := float64(mr.succ) / float64(mr.att)
			mr.prob = (cur*(100-MinstrelEWMALevel) + mr.prob*MinstrelEWMALevel) / 100
			mr.tp = mr.prob * float64(des.Second) / float64(mr.perfect)
		}
		mr.att, mr.succ = 0, 0
		if mr.prob > 0.95 || mr.prob < 0.10 {
			mr.adjRetry = min(mr.retry>>1, 2)
			mr.sampleLimit = 4
		} else {
			mr.adjRetry = mr.retry
			mr.sampleLimit = -1
		}
		if mr.adjRetry == 0 {
			mr.adjRetry = 2
		}
	}
	best, best2, bestP := 0, 0, 0
	for i := range m.r {
		if m.r[i].tp > m.r[best].tp {
			best = i
		}
		if m.r[i].prob > m.r[bestP].prob {
			bestP = i
		}
	}
	var tp2 float64
	for i := range m.r {
		if i != best && m.r[i].tp > tp2 {
			best2, tp2 = i, m.r[i].tp
		}
	}
	m.maxTp, m.maxTp2, m.maxProb = best, best2, bestP
}
