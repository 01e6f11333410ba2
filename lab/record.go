package lab

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/coopcc/coopcc/internal/buildinfo"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
	"github.com/coopcc/coopcc/schema"
	"golang.org/x/sys/unix"
)

// runRecord is run.json before the run: the scenario's description of the
// run in the record's units. The runner fills in the rest as the run goes.
func runRecord(r scenario.Run, cfg RunnerConfig) *schema.Run {
	res := &schema.Run{Schema: schema.RunVersion, ID: r.ID, Mode: r.Mode.Name, ModeKind: r.Mode.Kind, Policy: r.Mode.Policy,
		N: r.N, DelayMS: float64(r.Delay.D()) / 1e6, Rep: r.Rep, Params: r.Params, Valid: true, LengthS: r.Length.Seconds(),
		Backend: cfg.Backend, Direction: runDirection(r), WLAN: wlanRecord(r.WLAN), PolicyParams: r.PolicyParams, ServerAgent: r.ServerAgent,
		Wired: schema.Wired{RateBps: float64(r.Wired.Rate), DelayMS: float64(r.Wired.Delay.D()) / 1e6,
			QueueSize: r.Wired.QueueSize, Loss: r.Wired.Loss}}
	for i, st := range r.Stations {
		res.Stations = append(res.Stations, stationRecord(st, r.Traffic.Port+i))
	}
	res.Faults = faultRecords(r)
	return res
}

// runDirection is "up", "down", or "mixed" when the stations differ.
func runDirection(r scenario.Run) string {
	d := r.Traffic.Direction
	for _, st := range r.Stations {
		if st.Direction != d {
			return "mixed"
		}
	}
	return d
}

// stationRecord is a station's entry of run.json before the run.
func stationRecord(st scenario.Station, port int) schema.Station {
	via := "iperf3 -C"
	if st.Agent {
		via = "agent"
	}
	return schema.Station{Name: st.Name, Group: st.Group, Managed: st.Managed, CCVia: via,
		Agent: st.Agent, CC: st.CC, StartS: st.Start.Seconds(), StopS: st.Stop.Seconds(), PHYMbps: st.PHYMbps,
		FER: st.FER, Mobility: st.Mobility, ExtraDelayMS: float64(st.ExtraDelay.D()) / 1e6, Port: port, MaxMbps: st.MaxMbps, Direction: st.Direction,
		RateControl: st.RateControl, PER: st.PER, Sysctl: st.Sysctl, PolicyParams: st.PolicyParams}
}

// wlanRecord is the scenario's medium in the record's terms.
func wlanRecord(w scenario.WLAN) schema.WLAN {
	return schema.WLAN{PHY: w.PHY, DataMbps: w.DataMbps, APQueue: w.APQueue, APQueueSize: w.APQueueSize,
		StaQueueSize: w.StaQueueSize, FER: w.FER, RetryLimit: w.RetryLimit, AMPDUMax: w.AMPDUMax,
		NeighbourMbps: w.NeighbourLoad.Mbps(), AirtimeBSSRx: w.AirtimeBSSRx}
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

// recordedSysctls are the sysctls meta.json (the host's) and run.json (every
// namespace's) record.
var recordedSysctls = []string{
	"net.ipv4.tcp_congestion_control",
	"net.ipv4.tcp_available_congestion_control",
	"net.ipv4.tcp_sack",
	"net.ipv4.tcp_timestamps",
	"net.ipv4.tcp_ecn",
	"net.ipv4.tcp_window_scaling",
	"net.ipv4.tcp_no_metrics_save",
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
	"net.ipv4.tcp_limit_output_bytes",
	"net.ipv4.tcp_min_tso_segs",
	"net.core.default_qdisc",
	"net.core.rmem_max",
	"net.core.wmem_max",
}

// collectMeta fills the machine and tool fields of meta.json.
func collectMeta(m *schema.Meta, coopcc string) {
	m.GitRevision = gitRevision()
	m.Coopcc = coopcc
	if b, err := os.ReadFile(coopcc); err == nil {
		m.CoopccSHA256 = sha256Hex(b)
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = schema.Uname{Sysname: unix.ByteSliceToString(u.Sysname[:]), Release: unix.ByteSliceToString(u.Release[:]),
			Version: unix.ByteSliceToString(u.Version[:]), Machine: unix.ByteSliceToString(u.Machine[:])}
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
	m.HostSysctls = testbed.HostSysctls(append(recordedSysctls, "net.ipv4.tcp_allowed_congestion_control")...)
}

// sha256Hex is the hex SHA-256 of b.
func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
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
