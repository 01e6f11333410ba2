package nettest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
		// One directory per test process, named by its PID; those of test
		// processes that have exited (the binary cannot be removed at the
		// end of one test: later tests use it) are removed here.
		removeStaleBuilds()
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("coopcc-test-%d", os.Getpid()))
		if err := os.MkdirAll(dir, 0o755); err != nil {
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

// removeStaleBuilds deletes coopcc-test-PID directories whose process is gone.
func removeStaleBuilds() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "coopcc-test-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "coopcc-test-"))
		if err == nil && pid > 1 && !processAlive(pid) {
			_ = os.RemoveAll(d)
		}
	}
}
