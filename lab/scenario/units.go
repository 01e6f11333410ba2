package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration that decodes from a TOML string ("256ms",
// "1m30s") or a number of seconds (60, 0.5).
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Seconds returns the value in seconds.
func (d Duration) Seconds() float64 { return time.Duration(d).Seconds() }

// String formats the duration compactly ("256ms", "1m0s").
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalTOML implements toml.Unmarshaler.
func (d *Duration) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		p, err := time.ParseDuration(strings.TrimSpace(x))
		if err != nil {
			return fmt.Errorf("duration %q: want e.g. \"256ms\", \"60s\" or a number of seconds", x)
		}
		*d = Duration(p)
	case int64:
		*d = Duration(time.Duration(x) * time.Second)
	case float64:
		*d = Duration(time.Duration(x * float64(time.Second)))
	default:
		return fmt.Errorf("duration: want a string like \"256ms\" or a number of seconds, got %T", v)
	}
	if *d < 0 {
		return fmt.Errorf("duration %v is negative", time.Duration(*d))
	}
	return nil
}

// MarshalText implements encoding.TextMarshaler (for TOML/JSON output).
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Rate is a bit rate in bits per second. It decodes from a TOML string
// ("100Mbps", "1Gbps", "54Mbit", "800kbps") or a number of Mbit/s.
type Rate float64

// Mbps returns the rate in Mbit/s.
func (r Rate) Mbps() float64 { return float64(r) / 1e6 }

// String formats the rate with the largest unit that keeps it integral
// where possible ("100Mbps", "1Gbps").
func (r Rate) String() string {
	v := float64(r)
	switch {
	case v == 0:
		return "0"
	case v >= 1e9 && math.Mod(v, 1e9) == 0:
		return strconv.FormatFloat(v/1e9, 'f', -1, 64) + "Gbps"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "Mbps"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "kbps"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + "bps"
}

// UnmarshalTOML implements toml.Unmarshaler.
func (r *Rate) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		p, err := ParseRate(x)
		if err != nil {
			return err
		}
		*r = p
	case int64:
		*r = Rate(float64(x) * 1e6)
	case float64:
		*r = Rate(x * 1e6)
	default:
		return fmt.Errorf("rate: want a string like \"100Mbps\" or a number of Mbit/s, got %T", v)
	}
	if *r < 0 {
		return fmt.Errorf("rate %v is negative", *r)
	}
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// ParseRate parses "100Mbps", "1Gbps", "1gbit", "800kbps", "54M", "1e6bps".
func ParseRate(s string) (Rate, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, suf := range []struct {
		s string
		m float64
	}{{"gbps", 1e9}, {"gbit", 1e9}, {"g", 1e9}, {"mbps", 1e6}, {"mbit", 1e6}, {"m", 1e6}, {"kbps", 1e3}, {"kbit", 1e3}, {"k", 1e3}, {"bps", 1}, {"bit", 1}} {
		if strings.HasSuffix(t, suf.s) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, suf.s)), suf.m
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("rate %q: want e.g. \"100Mbps\", \"1Gbps\" or \"800kbps\"", s)
	}
	return Rate(f * mult), nil
}

// IntList is a list of integers that decodes from a TOML array ([1, 5, 10])
// or a range string ("1..10", "2..10..2" for a step of 2).
type IntList []int

// UnmarshalTOML implements toml.Unmarshaler.
func (l *IntList) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		*l = IntList{int(x)}
	case []any:
		out := make(IntList, 0, len(x))
		for _, e := range x {
			i, ok := e.(int64)
			if !ok {
				return fmt.Errorf("integer list: element %v is %T, want an integer", e, e)
			}
			out = append(out, int(i))
		}
		*l = out
	case string:
		out, err := parseRange(x)
		if err != nil {
			return err
		}
		*l = out
	default:
		return fmt.Errorf("integer list: want [1, 2, 3] or \"1..10\", got %T", v)
	}
	return nil
}

func parseRange(s string) (IntList, error) {
	parts := strings.Split(strings.TrimSpace(s), "..")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("range %q: want \"FROM..TO\" or \"FROM..TO..STEP\"", s)
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("range %q: %q is not an integer", s, p)
		}
		nums[i] = n
	}
	step := 1
	if len(nums) == 3 {
		step = nums[2]
	}
	if step <= 0 || nums[1] < nums[0] {
		return nil, fmt.Errorf("range %q: want FROM <= TO and a positive STEP", s)
	}
	if (nums[1]-nums[0])/step > 10000 {
		return nil, fmt.Errorf("range %q: more than 10000 values", s)
	}
	var out IntList
	for i := nums[0]; i <= nums[1]; i += step {
		out = append(out, i)
	}
	return out, nil
}

// Managed says which terminals run the agent in policy modes: "all",
// "none", or a number k (the first k terminals).
type Managed struct {
	All   bool
	Count int // used when All is false
	set   bool
}

// UnmarshalTOML implements toml.Unmarshaler.
func (m *Managed) UnmarshalTOML(v any) error {
	m.set = true
	switch x := v.(type) {
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "all":
			*m = Managed{All: true, set: true}
		case "none":
			*m = Managed{set: true}
		default:
			n, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil || n < 0 {
				return fmt.Errorf("managed %q: want \"all\", \"none\" or a number of terminals", x)
			}
			*m = Managed{Count: n, set: true}
		}
	case bool:
		*m = Managed{All: x, set: true}
	case int64:
		if x < 0 {
			return fmt.Errorf("managed %d: must not be negative", x)
		}
		*m = Managed{Count: int(x), set: true}
	default:
		return fmt.Errorf("managed: want \"all\", \"none\", true/false or a number, got %T", v)
	}
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (m Managed) MarshalText() ([]byte, error) {
	if m.All {
		return []byte("all"), nil
	}
	if m.Count == 0 {
		return []byte("none"), nil
	}
	return []byte(strconv.Itoa(m.Count)), nil
}

// durationLabel formats a duration for run ids: "256ms", "4ms", "1.5s".
func durationLabel(d Duration) string {
	t := d.D()
	switch {
	case t == 0:
		return "0ms"
	case t%time.Second == 0:
		return fmt.Sprintf("%ds", t/time.Second)
	case t%time.Millisecond == 0:
		return fmt.Sprintf("%dms", t/time.Millisecond)
	case t%time.Microsecond == 0:
		return fmt.Sprintf("%dus", t/time.Microsecond)
	}
	return t.String()
}
