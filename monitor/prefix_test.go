package monitor

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParsePrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"10.0.0.1", "10.0.0.1/32"},
		{"10.0.0.5/8", "10.0.0.0/8"},
		{"2001:db8::1", "2001:db8::1/128"},
		{"2001:db8::1/32", "2001:db8::/32"},
		// The kernel reports IPv4 flows with 4-byte addresses: a mapped
		// address or prefix is the IPv4 one it maps.
		{"::ffff:10.0.0.1", "10.0.0.1/32"},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},
		{"::ffff:0:0/80", "::/80"}, // wider than the mapped space: left as IPv6
	} {
		got, err := ParsePrefix(tc.in)
		if err != nil || got != netip.MustParsePrefix(tc.want) {
			t.Errorf("ParsePrefix(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"10.1.2", "10.0.0.0/33", "", "host.example"} {
		if _, err := ParsePrefix(in); err == nil || !strings.Contains(err.Error(), "not an address or prefix") {
			t.Errorf("ParsePrefix(%q): error %v, want one that says it is not an address or prefix", in, err)
		}
	}
	// A flow to 10.0.0.1 is inside what "::ffff:10.0.0.1" selects.
	if p, _ := ParsePrefix("::ffff:10.0.0.1"); !p.Contains(netip.MustParseAddr("10.0.0.1")) {
		t.Errorf("%v does not contain 10.0.0.1", p)
	}
}
