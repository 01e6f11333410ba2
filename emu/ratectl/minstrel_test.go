package ratectl

import (
	"math/rand/v2"
	"testing"

	"github.com/coopcc/coopcc/emu/des"
	"github.com/coopcc/coopcc/emu/phy"
)

func gParams(t *testing.T, seed uint64) Params {
	t.Helper()
	g, err := phy.Lookup("g")
	if err != nil {
		t.Fatal(err)
	}
	return Params{Rates: g.Rates, RetryLimit: 7, Slot: g.Slot, CWMin: g.CWMin, CWMax: g.CWMax, Seed: seed,
		AttemptTime: func(r float64) des.Time {
			return g.DIFS() + g.SuccessTime(g.DataTime(r, g.MPDUBytes(1200)))
		}}
}

// run sends frames for the given virtual time over a channel where an
// attempt at rate r succeeds with probability okP(r); it returns per-rate
// delivered frames and how many frames sampled.
func run(m *Minstrel, seconds float64, okP func(float64) float64, rng *rand.Rand) (map[float64]int, int) {
	got := map[float64]int{}
	var now des.Time
	sampled := 0
	end := des.Time(seconds * float64(des.Second))
	for now < end {
		for a := 0; m.Retry(a); a++ {
			r := m.Rate(now, a)
			if a == 0 {
				tp, _, _ := m.Best()
				if c := m.Chain(); r != tp || c[1][0] != m.rates[m.maxTp2] {
					sampled++
				}
			}
			now += m.r[index(m.rates, r)].perfect
			ok := rng.Float64() < okP(r)
			m.Report(now, r, ok)
			if ok {
				got[r]++
				break
			}
		}
	}
	return got, sampled
}

// Linux minstrel_rate_init: per-stage attempts fit 6 ms with backoff
// doubling from CWmin 15, at most 7.
func TestMinstrelRetryCounts(t *testing.T) {
	m := NewMinstrel(gParams(t, 1))
	// 54 Mbps, 1200 B: attempt ≈ 268 µs incl. DIFS+ACK; cumulative with mean
	// backoff 67, 139, 283, 571, 1147, 2299 µs -> 6 ms reached at the 6th retry.
	if got := m.r[7].retry; got != 6 {
		t.Errorf("54 Mbps: %d attempts per stage, want 6", got)
	}
	// 6 Mbps: attempt ≈ 1.7 ms, three fit in 6 ms.
	if got := m.r[0].retry; got != 3 {
		t.Errorf("6 Mbps: %d attempts per stage, want 3", got)
	}
}

// On a perfect channel Minstrel climbs from the lowest rate to 54 Mbps
// through sampling, and then sends nearly everything at 54.
func TestMinstrelFindsTopRateOnCleanChannel(t *testing.T) {
	m := NewMinstrel(gParams(t, 1))
	rng := rand.New(rand.NewPCG(1, 2))
	run(m, 2, func(float64) float64 { return 1 }, rng)
	if tp, _, _ := m.Best(); tp != 54 {
		t.Fatalf("best rate after 2 s: %v", tp)
	}
	got, _ := run(m, 2, func(float64) float64 { return 1 }, rng)
	total := 0
	for _, n := range got {
		total += n
	}
	if f := float64(got[54]) / float64(total); f < 0.85 {
		t.Fatalf("only %.2f of frames at 54 Mbps", f)
	}
}

// With a loss wall above 36 Mbps (PER 1 at 48 and 54, 0 below), the
// best-throughput rate settles at 36 and the chain is
// [best, second best, best probability, lowest].
func TestMinstrelSettlesBelowLossWall(t *testing.T) {
	m := NewMinstrel(gParams(t, 3))
	rng := rand.New(rand.NewPCG(3, 4))
	okP := func(r float64) float64 {
		if r > 36 {
			return 0
		}
		return 1
	}
	_, sampled := run(m, 5, okP, rng)
	tp, tp2, prob := m.Best()
	if tp != 36 || tp2 != 24 {
		t.Fatalf("best %v second %v, want 36 and 24", tp, tp2)
	}
	if m.Probability(54) > 0.01 || m.Probability(36) < 0.9 || prob > 36 {
		t.Fatalf("probabilities: 54 %.2f 36 %.2f best-prob rate %v", m.Probability(54), m.Probability(36), prob)
	}
	m.Rate(10*des.Second, 0)
	c := m.Chain()
	if c[3][0] != 6 || c[2][0] != prob {
		t.Fatalf("chain %v: stage 3 must be the best-probability rate, stage 4 the lowest", c)
	}
	_ = sampled
}

// About 10 % of frames are sampling frames (lookaround 10 %; a deferred
// sample counts half, so the share of frames with a sample somewhere in the
// chain lies between 10 and 20 %).
func TestMinstrelSamplingShare(t *testing.T) {
	m := NewMinstrel(gParams(t, 5))
	rng := rand.New(rand.NewPCG(5, 6))
	okP := func(r float64) float64 { return 1 - r/80 }
	run(m, 1, okP, rng)
	var frames, samples int
	var now des.Time
	for i := 0; i < 20000; i++ {
		m.maybeUpdate(now)
		tp, tp2 := m.maxTp, m.maxTp2
		m.Rate(now, 0)
		if m.chain[0].idx != tp || m.chain[1].idx != tp2 {
			samples++
		}
		frames++
		r := m.rates[m.chain[0].idx]
		m.Report(now, r, rng.Float64() < okP(r))
		now += 300 * des.Microsecond
	}
	if f := float64(samples) / float64(frames); f < 0.08 || f > 0.2 {
		t.Fatalf("sampling share %.3f", f)
	}
}

// Same seed, same decisions.
func TestMinstrelDeterministic(t *testing.T) {
	seq := func() []float64 {
		m := NewMinstrel(gParams(t, 9))
		rng := rand.New(rand.NewPCG(9, 9))
		var out []float64
		var now des.Time
		for i := 0; i < 5000; i++ {
			r := m.Rate(now, 0)
			out = append(out, r)
			now += 500 * des.Microsecond
			m.Report(now, r, rng.Float64() < 0.7)
		}
		return out
	}
	a, b := seq(), seq()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("diverged at frame %d", i)
		}
	}
}
