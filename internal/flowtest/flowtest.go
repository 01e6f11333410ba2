// Package flowtest reads TCP flows for integration tests: the data
// connection of an iperf3 run, on either end, through the monitor
// (inet_diag). It is test scaffolding beside internal/nettest, which the
// monitor's own tests use and so cannot import the monitor itself.
package flowtest

import (
	"testing"

	"github.com/coopcc/coopcc/monitor"
)

// DataFlow returns the established connection on port in namespace ns that
// moved the most bytes (acknowledged for a sender, received for a receiver):
// iperf3's data connection rather than its control connection. ok is false
// when there is none; a monitor error fails the test.
func DataFlow(t testing.TB, ns string, port uint16) (f monitor.Flow, ok bool) {
	t.Helper()
	m, err := monitor.New(monitor.Options{Netns: ns, Filter: monitor.Filter{Port: port, States: []uint8{monitor.StateEstablished}}})
	if err != nil {
		t.Fatalf("monitor %s: %v", ns, err)
	}
	defer m.Close()
	flows, err := m.Snapshot()
	if err != nil {
		t.Fatalf("snapshot %s: %v", ns, err)
	}
	for _, g := range flows {
		if !ok || g.BytesAcked+g.BytesReceived > f.BytesAcked+f.BytesReceived {
			f, ok = g, true
		}
	}
	return f, ok
}
