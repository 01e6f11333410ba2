package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --cpuprofile writes a profile in pprof's format, on any subcommand, and a
// path that cannot be created is an error that names the flag.
func TestCPUProfileFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	if _, err := runCLI(t, "version", "--cpuprofile", path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b { // pprof's format: gzipped protobuf
		t.Fatalf("profile of %d bytes is not a gzipped pprof profile", len(b))
	}
	_, err = runCLI(t, "version", "--cpuprofile", filepath.Join(t.TempDir(), "missing", "cpu.prof"))
	if err == nil || !strings.Contains(err.Error(), "--cpuprofile") {
		t.Fatalf("uncreatable path: %v", err)
	}
}
