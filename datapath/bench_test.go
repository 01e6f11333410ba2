package datapath

import (
	"encoding/json"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/coopcc/coopcc/internal/nettest"
)

// cpuJiffies returns the busy and total jiffies of all CPUs (/proc/stat).
func cpuJiffies(b *testing.B) (busy, total uint64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	line := strings.SplitN(string(data), "\n", 2)[0] // "cpu  user nice system idle iowait irq softirq steal ..."
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseUint(f, 10, 64)
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}

type iperfCPU struct {
	bytes          float64
	seconds        float64
	hostPct, rmPct float64
}

func parseIperfCPU(b *testing.B, out string) iperfCPU {
	var rep struct {
		End struct {
			SumSent struct {
				Bytes   float64 `json:"bytes"`
				Seconds float64 `json:"seconds"`
			} `json:"sum_sent"`
			CPU struct {
				HostTotal   float64 `json:"host_total"`
				RemoteTotal float64 `json:"remote_total"`
			} `json:"cpu_utilization_percent"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		b.Fatalf("parse iperf3: %v\n%s", err, out)
	}
	e := rep.End
	return iperfCPU{e.SumSent.Bytes, e.SumSent.Seconds, e.CPU.HostTotal, e.CPU.RemoteTotal}
}

// bpfRuntime sums the run time and run count of programs (BPF stats).
func bpfRuntime(b *testing.B, ids []ebpf.ProgramID) (time.Duration, uint64) {
	var rt time.Duration
	var n uint64
	for _, id := range ids {
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			b.Fatal(err)
		}
		st, err := p.Stats()
		p.Close()
		if err != nil {
			b.Fatal(err)
		}
		rt += st.Runtime
		n += st.RunCount
	}
	return rt, n
}

// BenchmarkCPUPerGB sends over a plain veth pair (no rate limit) with plain
// cubic and with coopcc_cubic (bounds installed but not binding, so every
// ACK pays the map lookups and the clamp check), alternating in one run,
// and reports CPU seconds per GB three ways:
//   - proc: the iperf3 sender's and receiver's own CPU (getrusage, which
//     includes the softirq TCP work done in their context), summed over the
//     rounds (and, for reference, the median of the per-round ratios);
//   - sys: the whole machine's busy time (/proc/stat), noisier because the
//     host runs other work;
//   - bpf: the kernel's BPF run-time statistics of the coopcc programs,
//     which include CUBIC's own work in the kfuncs, so bpf-share-% is an
//     upper bound of what the struct_ops indirection and clamping cost
//     relative to the plain-cubic CPU.
//
// veth uses 64 KB GSO segments and GRO, so ACKs are few per byte (about one
// callback pair per 100 KB); ns/callback gives the per-ACK cost for other
// ACK rates.
func BenchmarkCPUPerGB(b *testing.B) {
	nettest.RequireRoot(b)
	nettest.RequireTool(b, "iperf3")
	size := "2G"
	rounds := 8
	if s := os.Getenv("COOPCC_BENCH_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	cli := nettest.NewNS(b, "bc")
	srv := nettest.NewNS(b, "bs")
	nettest.Veth(b, cli, "10.77.80.1/24", srv, "10.77.80.2/24")
	srv.Iperf3Server(b, 5201)
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		b.Fatalf("enable BPF stats: %v", err)
	}
	defer stats.Close()
	dp, err := Open(Options{Netns: cli.Name, Lease: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	defer dp.Close()
	if err := dp.Set(netip.Addr{}, Bounds{Lo: 1, Hi: MaxCwnd}); err != nil {
		b.Fatal(err)
	}
	type acc struct{ gb, procCPU, sysCPU float64 }
	res := map[string]*acc{"cubic": {}, dp.CCName(): {}}
	var ratios []float64
	var bpfTime time.Duration
	var bpfRuns uint64
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			var perGB [2]float64
			for j, cc := range []string{"cubic", dp.CCName()} {
				busy0, _ := cpuJiffies(b)
				rt0, n0 := bpfRuntime(b, dp.Objects().Programs)
				out := cli.Exec(b, "iperf3", "-c", "10.77.80.2", "-p", "5201", "-n", size, "-J", "-C", cc)
				rt1, n1 := bpfRuntime(b, dp.Objects().Programs)
				busy1, _ := cpuJiffies(b)
				p := parseIperfCPU(b, out)
				a := res[cc]
				cpu := (p.hostPct + p.rmPct) / 100 * p.seconds
				a.gb += p.bytes / 1e9
				a.procCPU += cpu
				a.sysCPU += float64(busy1-busy0) / 100 // USER_HZ
				perGB[j] = cpu / (p.bytes / 1e9)
				// iperf3's control connection uses the namespace default
				// (coopcc) in both runs: count all BPF time against coopcc.
				bpfTime += rt1 - rt0
				bpfRuns += n1 - n0
			}
			ratios = append(ratios, perGB[1]/perGB[0])
		}
	}
	sort.Float64s(ratios)
	median := (ratios[(len(ratios)-1)/2] + ratios[len(ratios)/2]) / 2
	plain, bounded := res["cubic"], res[dp.CCName()]
	pp, bp := plain.procCPU/plain.gb, bounded.procCPU/bounded.gb
	ps, bs := plain.sysCPU/plain.gb, bounded.sysCPU/bounded.gb
	bpfPerGB := bpfTime.Seconds() / bounded.gb
	b.ReportMetric(pp, "cubic-proc-s/GB")
	b.ReportMetric(bp, "coopcc-proc-s/GB")
	b.ReportMetric(100*(bp/pp-1), "proc-overhead-%")
	b.ReportMetric(100*(median-1), "proc-overhead-median-round-%")
	b.ReportMetric(100*(bs/ps-1), "sys-overhead-%")
	b.ReportMetric(bpfPerGB, "bpf-s/GB")
	b.ReportMetric(100*bpfPerGB/pp, "bpf-share-%")
	b.ReportMetric(float64(bpfTime.Nanoseconds())/float64(max(bpfRuns, 1)), "ns/callback")
	b.Logf("cubic: %.2f GB, proc %.3f s/GB, sys %.3f s/GB; %s: %.2f GB, proc %.3f s/GB, sys %.3f s/GB; per-round proc ratios %.3f",
		plain.gb, pp, ps, dp.CCName(), bounded.gb, bp, bs, ratios)
	b.Logf("coopcc BPF programs: %d callbacks, %v total, %.4f s/GB, %.0f ns/callback",
		bpfRuns, bpfTime, bpfPerGB, float64(bpfTime.Nanoseconds())/float64(max(bpfRuns, 1)))
	c, _ := dp.Counters()
	if len(c) != 0 {
		b.Errorf("bounds should not bind in the benchmark: %v", c)
	}
}
