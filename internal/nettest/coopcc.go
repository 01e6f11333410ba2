package nettest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var coopccBuild struct {
	once sync.Once
	bin  string
	err  error
}

// CoopccBinary builds cmd/coopcc once per test process and returns its path,
// for tests that run the real binary (agents, the emulator, signals).
func CoopccBinary(t testing.TB) string {
	t.Helper()
	RequireTool(t, "go")
	b := &coopccBuild
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "coopcc-test-")
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, "coopcc")
		if out, err := exec.Command("go", "build", "-o", b.bin, "github.com/coopcc/coopcc/cmd/coopcc").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatalf("go build coopcc: %v", b.err)
	}
	return b.bin
}
