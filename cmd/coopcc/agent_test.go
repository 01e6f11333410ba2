package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAgentBadInput(t *testing.T) {
	dir := t.TempDir()
	unknown := filepath.Join(dir, "unknown.toml")
	if err := os.WriteFile(unknown, []byte("iface = \"eth0\"\n[monitor]\nintervall = \"1s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"agent"}, "iface is not set"},
		{[]string{"agent", "--iface", "eth0"}, "no group key"},
		{[]string{"agent", "--iface", "eth0", "--key-file", "k", "--policy", ""}, "policy.name is empty"},
		{[]string{"agent", "--iface", "eth0", "--key-file", "k", "--lease", "100ms"}, "datapath.lease"},
		{[]string{"agent", "--iface", "eth0", "--key-file", "k", "--dport", "0"}, "--dport 0"},
		{[]string{"agent", "--iface", "eth0", "--key-file", "k", "--dst", "nonsense"}, "managed.dst"},
		{[]string{"agent", "--iface", "eth0", "--key-file", "k", "--log-format", "xml"}, "log.format"},
		{[]string{"agent", "--iface", "eth0", "--key-file", "k", "--param", "novalue"}, "key=value"},
		{[]string{"agent", "--iface", "eth0", "--key-file", "k", "--clock-skew", "2h"}, "--clock-skew 2h0m0s"},
		{[]string{"agent", "--config", unknown, "--key-file", "k"}, "unknown key monitor.intervall"},
		{[]string{"agent", "--config", filepath.Join(dir, "missing.toml")}, "read config"},
		{[]string{"agent", "status", "--status-socket", filepath.Join(dir, "none.sock")}, "no agent answers"},
	}
	for _, tc := range cases {
		out, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("coopcc %s: got %v (output %q), want an error containing %q", strings.Join(tc.args, " "), err, out, tc.want)
		}
	}
}

func TestAgentConfigPrintsEffectiveConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(file, []byte("iface = \"wlan0\"\n[policy]\nname = \"hirai2013\"\n[monitor]\ninterval = \"1s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The file sets the policy and interval; flags override the interval and add a key.
	out, err := runCLI(t, "agent", "config", "--config", file, "--key-file", "/k", "--monitor-interval", "250ms", "--param", "bwmax=2e7")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{`iface = "wlan0"`, `name = "hirai2013"`, `interval = "250ms"`, `key_file = "/k"`, `bwmax = 2e+07`, `lease = "3s"`} {
		if !strings.Contains(out, want) {
			t.Errorf("effective config lacks %q:\n%s", want, out)
		}
	}
	t.Setenv("COOPCC_PASSPHRASE", "correct horse battery")
	out, err = runCLI(t, "agent", "config", "--config", file)
	if err != nil || !strings.Contains(out, `passphrase = "(redacted)"`) || strings.Contains(out, "horse") {
		t.Fatalf("passphrase from the environment: %v\n%s", err, out)
	}
}

// TestAgentClockSkewFlag: --clock-skew (the lab's clock_skew fault) is
// accepted, reaches the configuration and stays out of --help and of the
// TOML the agent prints (it is no file key).
func TestAgentClockSkewFlag(t *testing.T) {
	cmd := newAgentCmd()
	f := cmd.PersistentFlags()
	if fl := f.Lookup("clock-skew"); fl == nil || !fl.Hidden {
		t.Fatalf("--clock-skew missing or not hidden: %+v", fl)
	}
	if err := cmd.ParseFlags([]string{"--iface", "wlan0", "--key-file", "/k", "--clock-skew", "-7s"}); err != nil {
		t.Fatal(err)
	}
	var fl agentFlags
	fl.iface, fl.keyFile, fl.clockSkew = "wlan0", "/k", -7*time.Second
	cfg, err := loadAgentConfig(cmd, fl)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Group.ClockSkew != -7*time.Second {
		t.Fatalf("clock skew %v, want -7s", cfg.Group.ClockSkew)
	}
	out, err := runCLI(t, "agent", "config", "--key-file", "/k", "--iface", "wlan0", "--clock-skew", "3s")
	if err != nil || strings.Contains(out, "skew") {
		t.Fatalf("agent config with --clock-skew: %v\n%s", err, out)
	}
	if help, _ := runCLI(t, "agent", "--help"); strings.Contains(help, "clock-skew") {
		t.Fatalf("--help shows the test hook:\n%s", help)
	}
}
