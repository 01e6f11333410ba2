package lab

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coopcc/coopcc/schema"
)

// A run is run again only when the emulator marked it invalid while the
// hypervisor took emu.StealNoted or more of the CPU time: an invalid run at
// a quiet host (its own load) and a valid run on a busy one are kept.
func TestBusyHost(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  *schema.Run
		busy bool
	}{
		{"invalid, 14 % steal", &schema.Run{Emu: json.RawMessage(`{"valid":false,"cpu_steal":0.14}`)}, true},
		{"invalid, 0.3 % steal", &schema.Run{Emu: json.RawMessage(`{"valid":false,"cpu_steal":0.003}`)}, false},
		{"invalid, steal unknown", &schema.Run{Emu: json.RawMessage(`{"valid":false,"cpu_steal":-1}`)}, false},
		{"invalid, an emulator from before cpu_steal", &schema.Run{Emu: json.RawMessage(`{"valid":false}`)}, false},
		{"valid, 14 % steal", &schema.Run{Valid: true, Emu: json.RawMessage(`{"valid":true,"cpu_steal":0.14}`)}, false},
		{"invalid for iperf3, the emulator valid", &schema.Run{Emu: json.RawMessage(`{"valid":true,"cpu_steal":0.14}`)}, false},
		{"no emulator", &schema.Run{}, false},
		{"no run", nil, false},
	} {
		if _, busy := busyHost(tc.res); busy != tc.busy {
			t.Errorf("%s: busy %v, want %v", tc.name, busy, tc.busy)
		}
	}
}

func TestKeepAttempt(t *testing.T) {
	out := t.TempDir()
	id := "mode=coop,n=4,rep=1"
	if err := os.MkdirAll(filepath.Join(out, "runs", runDirName(id), "emu"), 0o755); err != nil {
		t.Fatal(err)
	}
	kept, err := keepAttempt(out, id, 2)
	if err != nil {
		t.Fatal(err)
	}
	if kept != filepath.Join("retried", runDirName(id)+".attempt2") {
		t.Errorf("kept in %q", kept)
	}
	if _, err := os.Stat(filepath.Join(out, kept, "emu")); err != nil {
		t.Errorf("the attempt's files: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "runs", runDirName(id))); !os.IsNotExist(err) {
		t.Errorf("the run's directory is still in runs/: %v", err)
	}
}

// TestWaitQuietHost: the gate before each run waits while the host's steal
// is at or above emu.StealNoted, lets a quiet host or an unknown steal run at
// once, does nothing when off, and lets the run go past its limit.
func TestWaitQuietHost(t *testing.T) {
	seq := func(xs ...float64) (func(context.Context, time.Duration) float64, *int) {
		n := 0
		return func(context.Context, time.Duration) float64 {
			v := xs[min(n, len(xs)-1)]
			n++
			return v
		}, &n
	}
	var log strings.Builder
	busyThenQuiet, n := seq(0.2, 0.05, 0.001)
	waitQuietHost(context.Background(), time.Hour, &log, busyThenQuiet)
	if *n != 3 || strings.Count(log.String(), "waiting for a quiet host") != 2 {
		t.Errorf("busy, busy, quiet: %d samples, log %q; want 3 samples and 2 waits", *n, log.String())
	}
	unknown, n := seq(-1)
	waitQuietHost(context.Background(), time.Hour, io.Discard, unknown)
	if *n != 1 {
		t.Errorf("unknown steal: %d samples, want 1 (no wait)", *n)
	}
	off, n := seq(0.5)
	waitQuietHost(context.Background(), 0, io.Discard, off)
	if *n != 0 {
		t.Errorf("the gate off: %d samples, want none", *n)
	}
	log.Reset()
	alwaysBusy, n := seq(0.5)
	waitQuietHost(context.Background(), time.Nanosecond, &log, alwaysBusy)
	if *n != 1 || !strings.Contains(log.String(), "running anyway") {
		t.Errorf("past the limit: %d samples, log %q; want 1 and \"running anyway\"", *n, log.String())
	}
}
