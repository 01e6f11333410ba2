package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/coopcc/coopcc/agent"
	"github.com/coopcc/coopcc/lab/scenario"
	"github.com/coopcc/coopcc/lab/testbed"
	"github.com/coopcc/coopcc/peer"
	"github.com/coopcc/coopcc/schema"
)

// faultRecords are the run's faults as scheduled, before anything fired
// (run.json of a run that failed before its traffic started).
func faultRecords(r scenario.Run) []schema.Fault {
	var out []schema.Fault
	for _, f := range r.Faults {
		rec := schema.Fault{Index: f.Index, Kind: f.Kind, Set: f.Set, Stations: f.Stations, AtS: f.At.Seconds(),
			UntilS: f.Until.Seconds(), RestartS: f.Restart.Seconds(), Direction: f.Direction, Fraction: f.Fraction,
			SkewS: f.Skew.D().Seconds(), Events: []schema.FaultEvent{}}
		if f.Kind == scenario.FaultInsider {
			rec.Insider = &schema.InsiderStatus{RateBps: float64(f.Rate), SRTTMS: ms(f.SRTT.D()), MinRTTMS: ms(f.MinRTT.D()),
				Flows: f.Flows, Cwnd: f.Cwnd, IntervalMS: ms(insiderInterval(f))}
		}
		if r.Mode.Kind != scenario.KindPolicy {
			rec.Skipped = fmt.Sprintf("mode %s runs no agents", r.Mode.Name)
		}
		out = append(out, rec)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// insiderInterval is an insider's send interval (default: the agents').
func insiderInterval(f scenario.RunFault) time.Duration {
	if f.Interval > 0 {
		return f.Interval.D()
	}
	return peer.DefaultInterval
}

// faultAction is one scheduled step of a fault.
type faultAction struct {
	at    time.Duration // after the traffic start
	fault int           // index into the run's faults
	do    func() []schema.FaultEvent
}

// faultRunner fires a run's faults on their schedule (after the traffic
// start t0) and records what it did. stop ends what is still running
// (drops, insiders) and returns the records; it may be called repeatedly.
type faultRunner struct {
	t0       time.Time
	mu       sync.Mutex
	recs     []schema.Fault
	quit     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	// cleanups end what a fault left running, by fault index, in order.
	cleanups []func()
}

// startFaults schedules the run's faults. agents is nil in modes without
// agents, where every fault is recorded as skipped.
func startFaults(r scenario.Run, tb *testbed.Testbed, agents *agentSet, t0 time.Time, keyFile, coopcc, dir string) *faultRunner {
	fr := &faultRunner{t0: t0, recs: faultRecords(r), quit: make(chan struct{}), done: make(chan struct{})}
	fc := faultContext{r: r, tb: tb, agents: agents, keyFile: keyFile, coopcc: coopcc, dir: dir}
	var actions []faultAction
	if agents != nil {
		for fi, f := range r.Faults {
			switch f.Kind {
			case scenario.FaultClockSkew:
				// Applied when the agents started (startAgents).
				for _, name := range f.Stations {
					i := fc.station(name)
					fr.recs[fi].Events = append(fr.recs[fi].Events, fr.event("skew", name, agents.skewAt[i], agents.pid(i), nil))
				}
			case scenario.FaultKill:
				actions = append(actions, fr.killActions(fc, fi, f)...)
			case scenario.FaultDrop:
				actions = append(actions, fr.dropActions(fc, fi, f)...)
			case scenario.FaultInsider:
				actions = append(actions, fr.insiderActions(fc, fi, f)...)
			}
		}
	}
	slices.SortStableFunc(actions, func(a, b faultAction) int { return int(a.at - b.at) })
	go fr.loop(actions)
	return fr
}

// faultContext is what the fault actions act on.
type faultContext struct {
	r                    scenario.Run
	tb                   *testbed.Testbed
	agents               *agentSet
	keyFile, coopcc, dir string
}

// station is the index of the station named name.
func (fc faultContext) station(name string) int {
	return slices.IndexFunc(fc.r.Stations, func(st scenario.Station) bool { return st.Name == name })
}

// killActions kill the fault's agents at its time and, with a restart
// time, start them again.
func (fr *faultRunner) killActions(fc faultContext, fi int, f scenario.RunFault) []faultAction {
	actions := []faultAction{{at: f.At.D(), fault: fi, do: func() []schema.FaultEvent {
		var evs []schema.FaultEvent
		for _, name := range f.Stations {
			pid, err := fc.agents.kill(fc.station(name))
			evs = append(evs, fr.event("kill", name, time.Now(), pid, err))
		}
		return evs
	}}}
	if f.Restart > 0 {
		actions = append(actions, faultAction{at: f.Restart.D(), fault: fi, do: func() []schema.FaultEvent {
			var evs []schema.FaultEvent
			for _, name := range f.Stations {
				p, err := fc.agents.start(fc.station(name))
				pid := 0
				if p != nil {
					pid = p.Pid()
				}
				evs = append(evs, fr.event("restart", name, time.Now(), pid, err))
			}
			return evs
		}})
	}
	return actions
}

// dropActions attach the fault's drop filters at its time and detach them
// (with their counts) at its end or when the run stops.
func (fr *faultRunner) dropActions(fc faultContext, fi int, f scenario.RunFault) []faultAction {
	var filters []*testbed.DropFilter
	var names []string
	var once sync.Once
	stopDrops := func() []schema.FaultEvent {
		var evs []schema.FaultEvent
		once.Do(func() {
			for k, df := range filters {
				seen, dropped, err := df.Counts()
				if cerr := df.Close(); err == nil {
					err = cerr
				}
				ev := fr.event("drop_stop", names[k], time.Now(), 0, err)
				ev.Seen, ev.Dropped = seen, dropped
				evs = append(evs, ev)
			}
		})
		return evs
	}
	ingress := f.Direction == scenario.DropIn || f.Direction == scenario.DropBoth
	egress := f.Direction == scenario.DropOut || f.Direction == scenario.DropBoth
	start := faultAction{at: f.At.D(), fault: fi, do: func() []schema.FaultEvent {
		var evs []schema.FaultEvent
		for _, name := range f.Stations {
			df, err := fc.tb.DropUDP(fc.tb.Stations[fc.station(name)], peer.DefaultPort, ingress, egress, f.Fraction)
			if err == nil { // read by stopDrops on this goroutine, or by stop after it ended
				filters, names = append(filters, df), append(names, name)
			}
			evs = append(evs, fr.event("drop_start", name, time.Now(), 0, err))
		}
		return evs
	}}
	fr.cleanups = append(fr.cleanups, func() { fr.addEvents(fi, stopDrops()) })
	return []faultAction{start, {at: f.Until.D(), fault: fi, do: stopDrops}}
}

// insiderActions run `coopcc peer send` with the fault's lie in its
// station's namespace from its time to its end (or the run's).
func (fr *faultRunner) insiderActions(fc faultContext, fi int, f scenario.RunFault) []faultAction {
	var proc *testbed.Proc
	var once sync.Once
	stopInsider := func() []schema.FaultEvent {
		var evs []schema.FaultEvent
		once.Do(func() {
			if proc == nil {
				return
			}
			err := proc.Stop(syscall.SIGTERM, 5*time.Second)
			evs = append(evs, fr.event("insider_stop", f.Stations[0], time.Now(), proc.Pid(), err))
		})
		return evs
	}
	start := faultAction{at: f.At.D(), fault: fi, do: func() []schema.FaultEvent {
		name := f.Stations[0]
		nd := fc.tb.Stations[fc.station(name)]
		argv := []string{fc.coopcc, "peer", "send", "--iface", nd.Iface, "--key-file", fc.keyFile, "--group", labGroup,
			"--rate", strconv.FormatFloat(float64(f.Rate), 'f', -1, 64) + "bps",
			"--srtt", f.SRTT.String(), "--min-rtt", f.MinRTT.String(),
			"--flows", strconv.Itoa(f.Flows), "--cwnd", strconv.Itoa(f.Cwnd),
			"--interval", insiderInterval(f).String()}
		logf, err := os.Create(filepath.Join(fc.dir, "logs", "insider-"+name+".log"))
		if err != nil {
			return []schema.FaultEvent{fr.event("insider_start", name, time.Now(), 0, err)}
		}
		defer logf.Close()
		p, err := fc.tb.Exec(nd, "insider "+name, argv, logf, logf, syscall.SIGTERM)
		pid := 0
		if err == nil {
			proc, pid = p, p.Pid()
		}
		return []schema.FaultEvent{fr.event("insider_start", name, time.Now(), pid, err)}
	}}
	fr.cleanups = append(fr.cleanups, func() { fr.addEvents(fi, stopInsider()) })
	return []faultAction{start, {at: f.Until.D(), fault: fi, do: stopInsider}}
}

// loop fires the actions in time order until they are done or stop is called.
func (fr *faultRunner) loop(actions []faultAction) {
	defer close(fr.done)
	for _, a := range actions {
		select {
		case <-time.After(time.Until(fr.t0.Add(a.at))):
		case <-fr.quit:
			return
		}
		fr.addEvents(a.fault, a.do())
	}
}

func (fr *faultRunner) addEvents(fi int, evs []schema.FaultEvent) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	fr.recs[fi].Events = append(fr.recs[fi].Events, evs...)
}

// event is a FaultEvent at t.
func (fr *faultRunner) event(action, station string, t time.Time, pid int, err error) schema.FaultEvent {
	ev := schema.FaultEvent{Action: action, Station: station, T: t.UTC(), TS: t.Sub(fr.t0).Seconds(), Pid: pid}
	if err != nil {
		ev.Error = err.Error()
	}
	return ev
}

// stop cancels the actions not yet fired, ends running drops and insiders
// and returns the records.
func (fr *faultRunner) stop() []schema.Fault {
	if fr == nil {
		return nil
	}
	fr.stopOnce.Do(func() {
		close(fr.quit)
		<-fr.done
		for _, c := range fr.cleanups {
			c()
		}
	})
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return slices.Clone(fr.recs)
}

// agentSampler polls every agent's status socket into agents.jsonl.
type agentSampler struct {
	f    *os.File
	w    *bufio.Writer
	quit chan struct{}
	done chan struct{}
	once sync.Once
	err  error
}

func startAgentSampler(as *agentSet, path string, every time.Duration) (*agentSampler, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create agents.jsonl: %w", err)
	}
	s := &agentSampler{f: f, w: bufio.NewWriter(f), quit: make(chan struct{}), done: make(chan struct{})}
	idx := make([]int, 0, len(as.socks))
	for i := range as.socks {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		enc := json.NewEncoder(s.w)
		for {
			for _, i := range idx {
				smp := sampleAgent(as.socks[i], as.names[i], min(every, time.Second))
				if err := enc.Encode(smp); err != nil && s.err == nil {
					s.err = fmt.Errorf("write agents.jsonl: %w", err)
				}
			}
			select {
			case <-s.quit:
				return
			case <-t.C:
			}
		}
	}()
	return s, nil
}

// sampleAgent reads one agent's status (Up false when it does not answer).
func sampleAgent(sock, name string, timeout time.Duration) schema.AgentSample {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r, err := agent.QueryStatus(ctx, sock)
	smp := schema.AgentSample{T: time.Now().UTC(), Station: name}
	if err != nil {
		smp.Error = err.Error()
		return smp
	}
	smp.Up, smp.N, smp.Peers, smp.PolicyActive = true, r.N, len(r.Peers), r.PolicyOn
	// The lab's agents bound per destination (--dst the server): its entry,
	// else the default one.
	for _, b := range r.Bounds {
		if b.Dst == "" {
			smp.Lo, smp.Hi = b.Lo, b.Hi
		}
	}
	for _, b := range r.Bounds {
		if b.Dst != "" {
			smp.Lo, smp.Hi = b.Lo, b.Hi
		}
	}
	for _, fl := range r.Flows {
		smp.Flows++
		if fl.Lo != 0 || fl.Hi != 0 {
			smp.BoundedFlows++
		}
	}
	return smp
}

func (s *agentSampler) stop() error {
	s.once.Do(func() {
		close(s.quit)
		<-s.done
		if err := s.w.Flush(); err != nil && s.err == nil {
			s.err = fmt.Errorf("write agents.jsonl: %w", err)
		}
		if err := s.f.Close(); err != nil && s.err == nil {
			s.err = err
		}
	})
	return s.err
}
