package monitor

import (
	"encoding/binary"
	"runtime"
	"testing"
)

// The tracer's BPF object is embedded on every little-endian GOARCH (arm64
// included) and parses without a kernel (runs under qemu-user too).
func TestEmbeddedTracerObjectParses(t *testing.T) {
	spec, err := loadTcpprobe()
	if err != nil {
		t.Fatalf("parse the embedded tcpprobe object on %s: %v", runtime.GOARCH, err)
	}
	if spec.ByteOrder != binary.LittleEndian {
		t.Errorf("byte order %v, want little-endian", spec.ByteOrder)
	}
	if err := spec.Assign(&tcpprobeSpecs{}); err != nil {
		t.Error(err)
	}
}
