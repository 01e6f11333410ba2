package datapath

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/cilium/ebpf"
)

// The BPF objects are little-endian (bpf2go -target bpfel) and embedded in
// the binary on every little-endian GOARCH, arm64 (Android) included. Parsing
// them needs no kernel, so this runs under qemu-user too (make test-arm64):
// each object must parse, be little-endian, and hold every program and map
// the generated Go types name (CollectionSpec.Assign fails on a missing one).
func TestEmbeddedObjectsParse(t *testing.T) {
	for _, o := range []struct {
		name  string
		load  func() (*ebpf.CollectionSpec, error)
		specs any
	}{
		{"cubic", loadCubic, &cubicSpecs{}},
		{"switchcc", loadSwitchcc, &switchccSpecs{}},
		{"sockops", loadSockops, &sockopsSpecs{}},
		{"rcvwnd", loadRcvwnd, &rcvwndSpecs{}},
	} {
		spec, err := o.load()
		if err != nil {
			t.Errorf("%s: parse the embedded object on %s: %v", o.name, runtime.GOARCH, err)
			continue
		}
		if spec.ByteOrder != binary.LittleEndian {
			t.Errorf("%s: byte order %v, want little-endian", o.name, spec.ByteOrder)
		}
		if len(spec.Programs) == 0 || len(spec.Maps) == 0 {
			t.Errorf("%s: %d programs, %d maps", o.name, len(spec.Programs), len(spec.Maps))
		}
		if err := spec.Assign(o.specs); err != nil {
			t.Errorf("%s: %v", o.name, err)
		}
		t.Logf("%s on %s: %d programs, %d maps", o.name, runtime.GOARCH, len(spec.Programs), len(spec.Maps))
	}
	spec, err := loadCubic()
	if err != nil {
		t.Fatal(err)
	}
	if ms := spec.Maps["coopcc_cubic"]; ms == nil || ms.Type != ebpf.StructOpsMap {
		t.Errorf("coopcc_cubic is not a struct_ops map: %+v", ms)
	}
}
