package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestPolicyEvalHayakawa2015(t *testing.T) {
	out, err := runCLI(t, "policy", "eval", "--policy", "hayakawa2015", "--n", "10", "--rtt", "256ms", "--min-rtt", "256ms")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "lo=5 ") || !strings.Contains(out, "hi=17 ") {
		t.Fatalf("output lacks lo=5 hi=17:\n%s", out)
	}
}

func TestPolicyEvalHayakawa2016Sequence(t *testing.T) {
	out, err := runCLI(t, "policy", "eval", "--policy", "hayakawa2016", "--n", "10", "--bwmax", "19M", "--min-rtt", "256ms", "--rtt-seq", "300ms,1.6s,1s")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("want header + 3 steps:\n%s", out)
	}
	for i, want := range []string{"active=no", "hi=1 ", "hi=28 "} {
		if !strings.Contains(lines[i+1], want) {
			t.Errorf("step %d lacks %q: %s", i, want, lines[i+1])
		}
	}
}

func TestPolicyEvalErrors(t *testing.T) {
	for _, args := range [][]string{
		{"policy", "eval", "--policy", "nope"},
		{"policy", "eval", "--n", "0"},
		{"policy", "eval", "--rate", "fast"},
		{"policy", "eval", "--rtt-seq", "1s,x"},
		{"policy", "eval", "--n", "2", "--app-limited-peers", "2"},
		{"policy", "eval", "--dst", "host"},
	} {
		if _, err := runCLI(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestPolicyPlanAndKnee(t *testing.T) {
	out, err := runCLI(t, "policy", "plan", "--base", "10")
	if err != nil || !strings.HasPrefix(out, "multiplier,lo,hi\n2,10,20\n") || !strings.HasSuffix(out, "64,630,640\n") {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	var in strings.Builder
	in.WriteString("bound,rtt\n")
	for k := 2; k <= 64; k++ {
		rtt := 4*time.Millisecond + time.Duration(min(k, 10))*3*time.Millisecond
		in.WriteString(strconv.Itoa(k) + "," + rtt.String() + "\n")
	}
	out, err = runCLIWithInput(t, in.String(), "policy", "knee", "-")
	if err != nil || !strings.HasPrefix(out, "knee 10 ") {
		t.Fatalf("knee: %v\n%s", err, out)
	}
	if _, err := runCLIWithInput(t, "1,2\n", "policy", "knee", "-"); err == nil {
		t.Fatal("knee with one sample: no error")
	}
}

func TestParseBitRate(t *testing.T) {
	cases := map[string]float64{"": 0, "19M": 19e6, "2.4Mbit": 2.4e6, "54e6": 54e6, "100k": 100e3, "1G": 1e9, "20Mbps": 20e6, "20Mbit/s": 20e6}
	for in, want := range cases {
		got, err := parseBitRate(in)
		if err != nil || got != want {
			t.Errorf("parseBitRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"x", "-1M", "1e30"} {
		if _, err := parseBitRate(bad); err == nil {
			t.Errorf("parseBitRate(%q) accepted", bad)
		}
	}
}
