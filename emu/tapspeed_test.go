package emu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/linkspeed"
)

// A station TAP's link speed follows the station's PHY rate, read inside its
// namespace as the agent reads it: sta1 (constant 54 Mbit/s 802.11g) has it
// from the start; sta2's rate (24 Mbit/s, from a mobility trace, so unknown
// at the start) is set once its pings have been sent over the air. The
// engine runs in this process (inline, ordinary scheduling).
func TestStationTAPSpeedFollowsPHYRate(t *testing.T) {
	const octet = 146
	b := newBSS(t, 2, octet)
	trace := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(trace, []byte("time_s,rate_mbps,fer,associated\n0,24,0,true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.cfg.Stations[1].Mobility = trace
	b.cfg.RTPriority = -1
	te, err := openTapEngine(b.cfg, EngineOptions{Inline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer te.close()
	speed := func(i int) uint32 {
		t.Helper()
		var v uint32
		if err := b.stas[i].Do(func() error {
			h, err := linkspeed.Open()
			if err != nil {
				return err
			}
			defer h.Close()
			v, err = h.Get("wlan0")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := speed(0); v != 54 {
		t.Errorf("sta1 speed at start %d Mbit/s, want 54", v)
	}
	before := speed(1)
	t.Logf("sta2 speed at start: %d Mbit/s (the TAP default)", before)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- te.run(ctx, 0) }()
	b.address(t, octet)
	b.stas[1].Exec(t, "ping", "-c", "3", "-i", "0.2", "-W", "2", fmt.Sprintf("10.77.%d.254", octet))
	deadline := time.Now().Add(2 * time.Second)
	for speed(1) != 24 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	sys := strings.TrimSpace(b.stas[1].Exec(t, "cat", "/sys/class/net/wlan0/speed"))
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if v := speed(1); v != 24 || sys != "24" {
		t.Errorf("sta2 speed %d Mbit/s (sysfs %q) after its pings, want 24 (was %d at start)", v, sys, before)
	}
	if v := speed(0); v != 54 {
		t.Errorf("sta1 speed %d Mbit/s at the end, want 54", v)
	}
	if rep := te.report(); rep.LinkSpeedErrors != 0 {
		t.Errorf("%d link speed errors: %s", rep.LinkSpeedErrors, rep.LinkSpeedError)
	}
}
