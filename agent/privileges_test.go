package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMissingCaps(t *testing.T) {
	for _, tc := range []struct {
		eff  uint64
		want string // "" = no error
	}{
		{0, "lacks CAP_NET_ADMIN and CAP_BPF"},
		{1 << capNetAdmin, "lacks CAP_BPF"},
		{1<<capNetAdmin | 1<<capBPF, ""},
		{1<<capNetAdmin | 1<<capSysAdmin, ""},
		{1 << capBPF, "lacks CAP_NET_ADMIN"},
		{0x000001ffffffffff, ""}, // root
	} {
		err := missingCaps(tc.eff)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("caps %x: %v", tc.eff, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "needs root")):
			t.Errorf("caps %x: %v, want %q", tc.eff, err, tc.want)
		}
	}
}

func TestEffectiveCaps(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status")
	if err := os.WriteFile(p, []byte("Name:\tcoopcc\nCapInh:\t0000000000000000\nCapEff:\t0000000000001000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if eff, err := effectiveCaps(p); err != nil || eff != 1<<capNetAdmin {
		t.Fatalf("CapEff %x, %v", eff, err)
	}
	if _, err := effectiveCaps("/proc/self/status"); err != nil {
		t.Fatalf("own status: %v", err)
	}
}
