package lab

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/coopcc/coopcc/internal/buildinfo"
	"golang.org/x/sys/unix"
)

// Meta is meta.json: what was run, where and with what.
type Meta struct {
	Scenario      string                       `json:"scenario"`
	Description   string                       `json:"description"`
	Quick         bool                         `json:"quick"`
	Duration      Duration                     `json:"duration_override,omitempty"`
	Backend       string                       `json:"backend"`
	GitRevision   string                       `json:"git_revision"`
	Coopcc        string                       `json:"coopcc"` // binary used for the emulator and agents
	Kernel        Uname                        `json:"kernel"`
	Hostname      string                       `json:"hostname"`
	CPUs          int                          `json:"cpus"`
	GoVersion     string                       `json:"go_version"`
	Tools         map[string]string            `json:"tools"` // iperf3, ip
	HostSysctls   map[string]string            `json:"host_sysctls"`
	Start         time.Time                    `json:"start"`
	End           time.Time                    `json:"end"`
	Interrupted   bool                         `json:"interrupted"`
	Runs          []string                     `json:"runs"` // run ids in the order they ran
	Failed        map[string]string            `json:"failed,omitempty"`
	RunSysctlsDoc string                       `json:"run_sysctls_note,omitempty"`
	Extra         map[string]map[string]string `json:"extra,omitempty"`
}

// Uname is the kernel identification.
type Uname struct {
	Sysname, Release, Version, Machine string
}

// RunResult is run.json (see BRIEF's results layout).
type RunResult struct {
	ID            string            `json:"id"`
	Mode          string            `json:"mode"`
	ModeKind      string            `json:"mode_kind"`
	Policy        string            `json:"policy,omitempty"`
	N             int               `json:"n"`
	DelayMS       float64           `json:"delay_ms"`
	Rep           int               `json:"rep"`
	Params        map[string]string `json:"params"`
	Stations      []StationResult   `json:"stations"`
	Server        string            `json:"server_addr"`
	Valid         bool              `json:"valid"`
	InvalidReason string            `json:"invalid_reason"`
	DurationS     float64           `json:"duration_s"` // wall time of the traffic phase
	LengthS       float64           `json:"length_s"`   // scheduled traffic length
	Start         time.Time         `json:"start"`
	// TrafficStart is the zero of the traffic schedule (start_s, stop_s,
	// launched_s): after the testbed is up and the agents have settled.
	TrafficStart time.Time      `json:"traffic_start"`
	End          time.Time      `json:"end"`
	Backend      string         `json:"backend"`
	Direction    string         `json:"direction"`
	WLAN         WLAN           `json:"wlan"`
	Wired        WiredResult    `json:"wired"`
	PolicyParams map[string]any `json:"policy_params,omitempty"`
	// Sysctls holds RecordedSysctls per namespace (by node name) as read
	// after the agents started.
	Sysctls map[string]map[string]string `json:"sysctls"`
	// Emu is the emulator's emu.json, verbatim.
	Emu        json.RawMessage    `json:"emu,omitempty"`
	SampleHz   float64            `json:"sample_hz"`
	Errors     []string           `json:"errors,omitempty"`
	Warnings   []string           `json:"warnings,omitempty"`
	GoodputBps map[string]float64 `json:"goodput_bps,omitempty"` // receiver side, per station, from iperf3
}

// StationResult is one station in run.json.
type StationResult struct {
	Name    string `json:"name"`
	Addr    string `json:"addr"`
	Group   string `json:"group,omitempty"`
	Managed bool   `json:"managed"`
	Agent   bool   `json:"agent"`
	CC      string `json:"cc"`
	// CCVia says how the CC was applied: "iperf3 -C" (per socket; the
	// namespace default may differ, see sysctls) or "agent" (the agent's
	// datapath installs its bounded CUBIC as the namespace default).
	CCVia        string  `json:"cc_via"`
	StartS       float64 `json:"start_s"`
	StopS        float64 `json:"stop_s"`
	PHYMbps      float64 `json:"phy_mbps"`
	FER          float64 `json:"fer"`
	Mobility     string  `json:"mobility,omitempty"`
	ExtraDelayMS float64 `json:"extra_delay_ms"`
	Port         int     `json:"port"`
	// RateControl, PER and Sysctl are the scenario's per-terminal settings
	// (the sysctls as asked; the values read back are in run.json's sysctls).
	RateControl string             `json:"rate_control,omitempty"`
	PER         map[string]float64 `json:"per,omitempty"`
	Sysctl      map[string]string  `json:"sysctl,omitempty"`
	// LaunchedS and ExitedS are when the lab started the station's iperf3
	// client and when it exited, in seconds after the traffic phase began.
	// iperf3 counts its -t from its own test start, so a client whose
	// connection setup was slow (a congested AP) runs later than scheduled:
	// aggregate goodput must be taken over the window the flows shared.
	LaunchedS float64 `json:"launched_s"`
	ExitedS   float64 `json:"exited_s"`
}

// WiredResult is the wired pipe of a run in plain units.
type WiredResult struct {
	RateBps   float64 `json:"rate_bps"`
	DelayMS   float64 `json:"delay_ms"`
	QueueSize int     `json:"queue_size"`
	Loss      float64 `json:"loss"`
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// collectMeta fills the machine and tool fields of meta.json.
func collectMeta(m *Meta, coopcc string) {
	m.GitRevision = gitRevision()
	m.Coopcc = coopcc
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = Uname{unix.ByteSliceToString(u.Sysname[:]), unix.ByteSliceToString(u.Release[:]),
			unix.ByteSliceToString(u.Version[:]), unix.ByteSliceToString(u.Machine[:])}
	}
	m.Hostname, _ = os.Hostname()
	m.CPUs = runtime.NumCPU()
	m.GoVersion = runtime.Version()
	m.Tools = map[string]string{}
	if out, err := exec.Command("iperf3", "--version").CombinedOutput(); err == nil {
		m.Tools["iperf3"] = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	if out, err := exec.Command("ip", "-V").CombinedOutput(); err == nil {
		m.Tools["iproute2"] = strings.TrimSpace(string(out))
	}
	if coopcc != "" {
		if out, err := exec.Command(coopcc, "version").CombinedOutput(); err == nil {
			m.Tools["coopcc"] = strings.TrimSpace(string(out))
		}
	}
	host, _ := readSysctls("", append(RecordedSysctls, "net.ipv4.tcp_allowed_congestion_control"))
	m.HostSysctls = host
}

// gitRevision is the VCS revision stamped in the binary, else `git
// rev-parse HEAD` of the working directory, else "unknown".
func gitRevision() string {
	if rev := buildinfo.Revision(); rev != "" {
		return rev
	}
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		rev := strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
			rev += "-dirty"
		}
		return rev
	}
	return "unknown"
}

// iperf3Goodput returns the receiver-side goodput (bits/s) of an iperf3 -J
// report, or an error naming what is wrong with it.
func iperf3Goodput(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var rep struct {
		Error string `json:"error"`
		End   struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return 0, fmt.Errorf("%s: not iperf3 JSON: %w", filepath.Base(path), err)
	}
	if rep.Error != "" {
		return 0, fmt.Errorf("%s: iperf3: %s", filepath.Base(path), rep.Error)
	}
	return rep.End.SumReceived.BitsPerSecond, nil
}
