package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coopcc/coopcc/internal/nettest"
)

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// coopccBinary builds cmd/coopcc once per test process (the runner starts
// the emulator and agents as `coopcc emu run` / `coopcc agent`).
func coopccBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "coopcc-lab-test-")
		if err != nil {
			buildErr = err
			return
		}
		buildBin = filepath.Join(dir, "coopcc")
		out, err := exec.Command("go", "build", "-o", buildBin, "github.com/coopcc/coopcc/cmd/coopcc").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err, string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("build coopcc: %v", buildErr)
	}
	return buildBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

func ownNamespaces(t *testing.T) []string {
	t.Helper()
	ls, err := Leftovers()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ls {
		if l.OwnerPID == os.Getpid() {
			out = append(out, l.Name)
		}
	}
	return out
}

// TestRunnerCancelTearsDown cancels a run in the middle (what Ctrl-C does)
// and checks that every namespace and process is gone and the partial
// results are recorded.
func TestRunnerCancelTearsDown(t *testing.T) {
	nettest.RequireRoot(t)
	nettest.RequireTool(t, "iperf3")
	bin := coopccBinary(t)
	s, err := Parse([]byte(`
name = "cancel"
modes = ["cubic", "reno"]
[terminals]
count = 3
[traffic]
duration = "30s"
`))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(3*time.Second, cancel)
	t0 := time.Now()
	_, err = RunScenario(ctx, s, RunnerConfig{Out: out, Backend: BackendVeth, Coopcc: bin})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("want an interrupted error, got %v", err)
	}
	if took := time.Since(t0); took > 20*time.Second {
		t.Errorf("cancel took %v to tear down", took)
	}
	if ns := ownNamespaces(t); len(ns) > 0 {
		t.Errorf("namespaces left after cancel: %v", ns)
	}
	var meta Meta
	readJSON(t, filepath.Join(out, "meta.json"), &meta)
	if !meta.Interrupted || len(meta.Runs) != 1 || meta.End.IsZero() {
		t.Errorf("meta after cancel: interrupted=%v runs=%v end=%v", meta.Interrupted, meta.Runs, meta.End)
	}
	var rr RunResult
	readJSON(t, filepath.Join(out, "runs", "mode=cubic,n=3,delay=0ms,rep=1", "run.json"), &rr)
	if rr.Valid || rr.InvalidReason != "interrupted" {
		t.Errorf("interrupted run: valid=%v reason=%q", rr.Valid, rr.InvalidReason)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// csvRows returns the header and rows of a CSV file.
func csvRows(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var header []string
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), ",")
		if header == nil {
			header = fs
			continue
		}
		rows = append(rows, fs)
	}
	return header, rows
}
