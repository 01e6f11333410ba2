package wire

import (
	"math/rand/v2"
	"testing"

	"github.com/coopcc/coopcc/emu/des"
)

func TestRateDelayQueue(t *testing.T) {
	sim := des.New()
	var at []des.Time
	p := New(sim, Config{RateMbps: 8, DelayMs: 10, QueueFrames: 2}, rand.New(rand.NewPCG(1, 1)), func([]byte, int) { at = append(at, sim.Now()) })
	for i := 0; i < 4; i++ { // 1000 B at 8 Mbps = 1 ms each; queue 2: the 4th is dropped
		p.Send(make([]byte, 1000), i, 0)
	}
	sim.RunUntil(des.Second)
	want := []des.Time{11 * des.Millisecond, 12 * des.Millisecond, 13 * des.Millisecond}
	if len(at) != 3 || p.Stats.QueueDrops != 1 {
		t.Fatalf("deliveries %v drops %d", at, p.Stats.QueueDrops)
	}
	for i := range want {
		if at[i] != want[i] {
			t.Fatalf("deliveries %v, want %v", at, want)
		}
	}
}

func TestLoss(t *testing.T) {
	sim := des.New()
	n := 0
	p := New(sim, Config{Loss: 0.25, QueueFrames: 100000}, rand.New(rand.NewPCG(1, 1)), func([]byte, int) { n++ })
	for i := 0; i < 10000; i++ {
		p.Send([]byte{1}, 0, 0)
	}
	sim.RunUntil(des.Second)
	if n < 7200 || n > 7800 || uint64(n)+p.Stats.LossDrops != 10000 {
		t.Fatalf("delivered %d of 10000 at 25%% loss", n)
	}
}
