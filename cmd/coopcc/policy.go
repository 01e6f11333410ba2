package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/coopcc/coopcc/policy"
)

func newPolicyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Inspect the cwnd-bound policies (static, hirai2013, hayakawa2015, hayakawa2016, coop)",
	}
	cmd.AddCommand(newPolicyEvalCmd(), newPolicyListCmd(), newPolicyPlanCmd(), newPolicyKneeCmd())
	return cmd
}

func newPolicyListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the policy names",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, n := range policy.Names() {
				fmt.Fprintln(cmd.OutOrStdout(), n)
			}
			return nil
		},
	}
}

// policyEvalFlags are the inputs of `coopcc policy eval`.
type policyEvalFlags struct {
	name                 string
	n, appLimitedPeers   int
	rtt, minRTT, peerMin time.Duration
	rttSeq               string
	rate, bwmax, alRate  string
	mss                  uint32
	steps                int
	interval             time.Duration
	lo, hi               uint32
	alpha                float64
	dst                  string
	target               float64
}

func newPolicyEvalCmd() *cobra.Command {
	var f policyEvalFlags
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Print the bounds and the reason a policy gives for synthetic inputs",
		Long: `eval builds a view — this terminal with one upload, and n−1 peers with one upload
each, all seeing the same RTT — feeds it to the policy once per step and prints the bounds
and the policy's reason. Stateful policies (hayakawa2016's hysteresis, hirai2013's 10 s
cadence, coop's capacity estimate) are shown over a sequence with --rtt-seq or --steps.

Rates are bit/s with an optional k/M/G suffix (e.g. 19M, 2.4Mbit, 54e6).`,
		Example: `  coopcc policy eval --policy hayakawa2015 --n 10 --rtt 256ms --min-rtt 256ms
  coopcc policy eval --policy hayakawa2016 --n 10 --min-rtt 256ms --rtt-seq 300ms,1.6s,2s,1.2s,1s
  coopcc policy eval --policy coop --n 10 --min-rtt 256ms --rate 2.4M --rtt-seq 3s,2s,1s,500ms,330ms,320ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPolicyEval(cmd.OutOrStdout(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.name, "policy", "coop", "policy name: "+strings.Join(policy.Names(), ", "))
	fl.IntVar(&f.n, "n", 1, "active terminals N including this one (peers = N−1)")
	fl.IntVar(&f.appLimitedPeers, "app-limited-peers", 0, "how many of the N−1 peers are application-limited")
	fl.StringVar(&f.alRate, "app-limited-rate", "", "delivery rate of the app-limited peers, bit/s (default: --rate / 10)")
	fl.DurationVar(&f.rtt, "rtt", 0, "smoothed RTT of every terminal (default: --min-rtt)")
	fl.DurationVar(&f.minRTT, "min-rtt", 256*time.Millisecond, "this terminal's min (base) RTT")
	fl.DurationVar(&f.peerMin, "peer-min-rtt", 0, "the peers' min RTT (default: --min-rtt); their SRTT has the same queueing delay as ours")
	fl.StringVar(&f.rttSeq, "rtt-seq", "", "comma-separated SRTT per step, e.g. 300ms,2s,1.6s (overrides --rtt and --steps)")
	fl.StringVar(&f.rate, "rate", "", "delivery rate of every terminal, bit/s (default: (--bwmax or 20M) / N)")
	fl.StringVar(&f.bwmax, "bwmax", "", "known link capacity, bit/s (hirai2013's bandwidth, hayakawa2016's BWmax)")
	fl.Uint32Var(&f.mss, "mss", 1448, "segment size, bytes")
	fl.IntVar(&f.steps, "steps", 1, "evaluations with the same inputs")
	fl.DurationVar(&f.interval, "interval", 500*time.Millisecond, "time between steps")
	fl.Uint32Var(&f.lo, "lo", 0, "static policy: lower bound, segments")
	fl.Uint32Var(&f.hi, "hi", 0, "static policy: upper bound, segments")
	fl.Float64Var(&f.alpha, "alpha", 0, "hirai2013 margin α, bytes")
	fl.StringVar(&f.dst, "dst", "10.77.0.1", "destination address of this terminal's flow")
	fl.Float64Var(&f.target, "target-ratio", 0, "coop target ratio_rtt (default 1.25)")
	return cmd
}

// runPolicyEval prints what the --policy policy decides at each step of
// `coopcc policy eval`: a header with the inputs, then one line per step.
func runPolicyEval(w io.Writer, f policyEvalFlags) error {
	in, err := f.resolve()
	if err != nil {
		return err
	}
	pol, err := f.newPolicy(in.bwmax)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "policy %s: N=%d (%d app-limited peers), min RTT %v (peers %v), rate %.3g bit/s per terminal, MSS %d\n",
		pol.Name(), f.n, f.appLimitedPeers, f.minRTT, in.peerMin, in.rate, f.mss)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, srtt := range in.srtts {
		elapsed := time.Duration(i) * f.interval
		d := pol.Decide(f.view(in, start.Add(elapsed), srtt))
		writeEvalStep(w, elapsed, srtt, f.minRTT, d, in.dst)
	}
	return nil
}

// policyEvalInputs are the flags of `coopcc policy eval` parsed, with their
// defaults filled in.
type policyEvalInputs struct {
	dst                 netip.Addr
	bwmax, rate, alRate float64         // bit/s
	srtts               []time.Duration // this terminal's SRTT, one per step
	peerMin             time.Duration
}

// resolve checks and parses the flags, in the order their errors are reported.
func (f policyEvalFlags) resolve() (policyEvalInputs, error) {
	var in policyEvalInputs
	if err := f.checkRanges(); err != nil {
		return in, err
	}
	dst, err := netip.ParseAddr(f.dst)
	if err != nil {
		return in, fmt.Errorf("--dst %q: want an IP address: %w", f.dst, err)
	}
	in.dst = dst
	if in.bwmax, in.rate, in.alRate, err = f.rates(); err != nil {
		return in, err
	}
	if in.srtts, err = f.srttSteps(); err != nil {
		return in, err
	}
	in.peerMin = cmp.Or(f.peerMin, f.minRTT)
	return in, nil
}

// checkRanges checks the counts and durations that need no parsing.
func (f policyEvalFlags) checkRanges() error {
	if f.n < 1 {
		return fmt.Errorf("--n %d: want at least 1 (this terminal)", f.n)
	}
	if f.appLimitedPeers < 0 || f.appLimitedPeers > f.n-1 {
		return fmt.Errorf("--app-limited-peers %d: want 0..%d (N−1)", f.appLimitedPeers, f.n-1)
	}
	if f.minRTT < 0 || f.rtt < 0 || f.peerMin < 0 {
		return fmt.Errorf("RTTs must not be negative")
	}
	if f.steps < 1 {
		return fmt.Errorf("--steps %d: want at least 1", f.steps)
	}
	return nil
}

// rates parses --bwmax, --rate and --app-limited-rate and fills in the
// defaults: rate (--bwmax or 20 Mbit/s) / N, app-limited rate rate / 10.
func (f policyEvalFlags) rates() (bwmax, rate, alRate float64, err error) {
	if bwmax, err = parseBitRate(f.bwmax); err != nil {
		return 0, 0, 0, fmt.Errorf("--bwmax: %w", err)
	}
	if rate, err = parseBitRate(f.rate); err != nil {
		return 0, 0, 0, fmt.Errorf("--rate: %w", err)
	}
	if f.rate == "" {
		rate = cmp.Or(bwmax, 20e6) / float64(f.n)
	}
	if alRate, err = parseBitRate(f.alRate); err != nil {
		return 0, 0, 0, fmt.Errorf("--app-limited-rate: %w", err)
	}
	if f.alRate == "" {
		alRate = rate / 10
	}
	return bwmax, rate, alRate, nil
}

// srttSteps is this terminal's SRTT at each step: the --rtt-seq list, or
// else --rtt (default --min-rtt) --steps times.
func (f policyEvalFlags) srttSteps() ([]time.Duration, error) {
	if f.rttSeq == "" {
		return slices.Repeat([]time.Duration{cmp.Or(f.rtt, f.minRTT)}, f.steps), nil
	}
	var srtts []time.Duration
	for _, s := range strings.Split(f.rttSeq, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("--rtt-seq element %q: want a duration like 300ms", s)
		}
		srtts = append(srtts, d)
	}
	return srtts, nil
}

// newPolicy builds the --policy policy with the parameters the flags give.
func (f policyEvalFlags) newPolicy(bwmax float64) (policy.Policy, error) {
	p := policy.Params{MSS: f.mss, BWmax: bwmax, Alpha: f.alpha, StaticLo: f.lo, StaticHi: f.hi}
	p.Coop.TargetRatio = f.target
	return policy.New(f.name, p)
}

// view is the policy's input at one step: this terminal's one flow to
// in.dst with SRTT srtt, and N−1 peers with one upload each and the same
// queueing delay, the last --app-limited-peers of them application-limited.
func (f policyEvalFlags) view(in policyEvalInputs, now time.Time, srtt time.Duration) policy.View {
	queue := max(srtt-f.minRTT, 0)
	v := policy.View{Now: now,
		Flows: []policy.FlowView{{Dst: in.dst, MSS: f.mss, Cwnd: 10, SRTT: srtt, MinRTT: f.minRTT, DeliveryRate: in.rate / 8}}}
	for k := 1; k < f.n; k++ {
		pv := policy.PeerView{ActiveFlows: 1, SRTT: in.peerMin + queue, MinRTT: in.peerMin, DeliveryRate: in.rate / 8}
		if k > f.n-1-f.appLimitedPeers {
			pv.AppLimited, pv.DeliveryRate = true, in.alRate/8
		}
		v.Peers = append(v.Peers, pv)
	}
	return v
}

// writeEvalStep prints the line of one step: the time since the first step,
// the SRTT and its ratio to minRTT, and whether the policy is active, the
// bounds it gives the flow to dst and its reason.
func writeEvalStep(w io.Writer, elapsed, srtt, minRTT time.Duration, d policy.Decision, dst netip.Addr) {
	b := d.BoundsFor(dst)
	active := "no "
	if d.Active {
		active = "yes"
	}
	fmt.Fprintf(w, "t=%-5s rtt=%-7v ratio=%-6.2f active=%s lo=%-5s hi=%-5s %s\n",
		fmt.Sprintf("%.1fs", elapsed.Seconds()), srtt,
		policy.RatioRTT(srtt, minRTT), active, boundStr(d.Active, b.Lo), boundStr(d.Active, b.Hi), d.Reason)
}

// boundStr prints a bound for the eval table: "-" when the decision is not
// active or the bound is unset.
func boundStr(active bool, v uint32) string {
	if !active || v == 0 {
		return "-"
	}
	return strconv.FormatUint(uint64(v), 10)
}

// parseBitRate parses "19M", "2.4Mbit", "54e6", "100k", "1G", "20Mbps",
// "20Mbit/s" as bit/s; "" is 0.
func parseBitRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	num := s
	for _, suf := range []string{"bit/s", "bps", "bit", "b"} {
		if strings.HasSuffix(strings.ToLower(num), suf) && len(num) > len(suf) {
			num = num[:len(num)-len(suf)]
			break
		}
	}
	mult := 1.0
	if n := len(num); n > 0 {
		switch num[n-1] {
		case 'k', 'K':
			mult, num = 1e3, num[:n-1]
		case 'M':
			mult, num = 1e6, num[:n-1]
		case 'G', 'g':
			mult, num = 1e9, num[:n-1]
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || v*mult > 1e15 {
		return 0, fmt.Errorf("%q: want a rate in bit/s like 19M, 2.4Mbit or 54e6", s)
	}
	return v * mult, nil
}

func newPolicyPlanCmd() *cobra.Command {
	var base uint32
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Print papers/003's calibration sweep: hi from 2× to 64× a base cwnd, lo one step below",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if base == 0 {
				return fmt.Errorf("--base 0: want the base cwnd in segments, e.g. --base 10")
			}
			fmt.Fprintln(cmd.OutOrStdout(), "multiplier,lo,hi")
			for i, b := range policy.CalibrationPlan(base) {
				fmt.Fprintf(cmd.OutOrStdout(), "%d,%d,%d\n", i+policy.CalibrationMinMultiplier, b.Lo, b.Hi)
			}
			return nil
		},
	}
	cmd.Flags().Uint32Var(&base, "base", 10, "base cwnd, segments")
	return cmd
}

func newPolicyKneeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "knee FILE|-",
		Short: "Find the knee (papers/003's \"buffer limited\" point) in bound,rtt samples",
		Long: `knee reads lines "bound,rtt" (comma or whitespace separated; rtt as a Go duration
like 12.5ms or as a number of milliseconds; a header line and #-comments are skipped)
and prints the breakpoint of the best two-segment least-squares fit of RTT against bound.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := cmd.InOrStdin()
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return fmt.Errorf("open samples: %w", err)
				}
				defer f.Close()
				in = f
			}
			samples, err := readKneeSamples(in)
			if err != nil {
				return err
			}
			knee, fit, err := policy.Knee(samples)
			if err != nil {
				return fmt.Errorf("%w (read %d samples)", err, len(samples))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "knee %g (from %d samples): below, rtt = %.3f ms + %.3f ms × bound; above, rtt = %.3f ms + %.3f ms × bound; sse %.3g s²\n",
				knee, fit.Points, fit.Intercept1*1e3, fit.Slope1*1e3, fit.Intercept2*1e3, fit.Slope2*1e3, fit.SSE)
			return nil
		},
	}
}

// readKneeSamples parses "bound,rtt" lines (see newPolicyKneeCmd).
func readKneeSamples(r io.Reader) ([]policy.Sample, error) {
	var out []policy.Sample
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == ';' })
		if len(fields) < 2 {
			return nil, fmt.Errorf("line %d %q: want \"bound,rtt\"", line, text)
		}
		bound, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			if len(out) == 0 && line == 1 {
				continue // header
			}
			return nil, fmt.Errorf("line %d: bound %q is not a number", line, fields[0])
		}
		rtt, err := time.ParseDuration(fields[1])
		if err != nil {
			ms, err2 := strconv.ParseFloat(fields[1], 64)
			if err2 != nil {
				return nil, fmt.Errorf("line %d: rtt %q is neither a duration (12ms) nor milliseconds", line, fields[1])
			}
			rtt = time.Duration(ms * float64(time.Millisecond))
		}
		out = append(out, policy.Sample{Bound: bound, RTT: rtt})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read samples: %w", err)
	}
	return out, nil
}
