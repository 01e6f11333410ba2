package agent

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Start-up and shut-down steps of Main reported to Options.Step (the
// datapath adds its own, dp-…, between StepStateRecorded and
// StepDatapathOpen and between StepPeersStopped and StepDatapathClosed).
const (
	StepLocked         = "locked"          // single-instance lock held
	StepStateRecorded  = "state-recorded"  // state file written, nothing changed yet
	StepDatapathOpen   = "datapath-open"   // datapath loaded, default switched, flows adopted
	StepStateUpdated   = "state-updated"   // state file lists this agent's objects only
	StepMonitorOpen    = "monitor-open"    // inet_diag monitor open
	StepPeersStarted   = "peers-started"   // peer protocol running
	StepReady          = "ready"           // status socket, metrics up; loop about to start
	StepStopping       = "stopping"        // loop ended, bounds removed
	StepPeersStopped   = "peers-stopped"   // goodbye sent, peer socket closed
	StepDatapathClosed = "datapath-closed" // default restored, objects unloaded
	StepStateRemoved   = "state-removed"   // state file gone: nothing left to clean up
)

// DatapathSetup is what Main gives Parts.OpenDatapath besides the
// configuration.
type DatapathSetup struct {
	// CCName is the congestion-control name to register, recorded in the
	// state file before Open.
	CCName string
	// Original is the namespace's default congestion control before any
	// agent ran ("" = unknown), from a dead predecessor's state.
	Original string
	// Adopt are dead predecessors' congestion controls: their sockets are
	// moved to the new instance and bounded again.
	Adopt []string
	// AdoptSockops are dead predecessors' sockops programs, detached.
	AdoptSockops []uint32
	// OnLoaded records the loaded objects before the namespace changes.
	OnLoaded func(DatapathLoaded) error
	// Step is the crash-injection hook (nil = none).
	Step func(string)
}

// DatapathLoaded is what the datapath reports once loaded.
type DatapathLoaded struct {
	Backend, CCName string
	// Original is the default Close restores ("" = not changed).
	Original          string
	Programs, Maps    []uint32
	SockopsProgramIDs []uint32
}

// Leftovers is what Parts.Cleanup removes: a dead agent's recorded changes.
type Leftovers struct {
	Original          string
	CCNames           []string
	SockopsProgramIDs []uint32
}

// newCCName returns coopcc_ + 8 random hex digits, the datapath's format.
func newCCName() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random cc name: %w", err)
	}
	return "coopcc_" + hex.EncodeToString(b[:]), nil
}

// recovery is the state-file bookkeeping of one Main run.
type recovery struct {
	file  StateFile
	state *State
	pred  *State // a dead predecessor's state (nil after a clean stop)
	step  func(string)
	last  DatapathLoaded // what the datapath reported at load
}

// startRecovery reads a predecessor's state (its presence means it died)
// and records this agent's intent — the congestion-control name it will
// register and the leftovers it inherits — before anything is changed.
func startRecovery(dir string, backend string, step func(string)) (*recovery, error) {
	id, err := NetnsID()
	if err != nil {
		return nil, err
	}
	r := &recovery{file: NewStateFile(dir, id), step: step}
	if r.pred, err = r.file.Load(); err != nil {
		return nil, err
	}
	r.state = inherit(r.pred, os.Getpid(), id, time.Now())
	name, err := newCCName()
	if err != nil {
		return nil, err
	}
	r.state.Backend = backend
	r.state.CCNames = appendNew(r.state.CCNames, name)
	if err := r.save(StepStateRecorded); err != nil {
		return nil, err
	}
	return r, nil
}

// ccName is the name this agent registers.
func (r *recovery) ccName() string { return r.state.CCNames[len(r.state.CCNames)-1] }

// save writes the state with the step reached, then calls the step hook.
func (r *recovery) save(step string) error {
	r.state.Step = step
	if err := r.file.Save(r.state); err != nil {
		return err
	}
	r.hook(step)
	return nil
}

func (r *recovery) hook(step string) {
	if r.step != nil {
		r.step(step)
	}
}

// setup is the DatapathSetup for this run.
func (r *recovery) setup() DatapathSetup {
	s := DatapathSetup{CCName: r.ccName(), Original: r.state.OriginalCC, OnLoaded: r.loaded, Step: r.step}
	if r.pred != nil {
		s.Adopt = r.pred.CCNames
		s.AdoptSockops = r.pred.SockopsProgramIDs
	}
	return s
}

// loaded records the objects and the original default before the
// datapath registers anything.
func (r *recovery) loaded(l DatapathLoaded) error {
	r.last = l
	if l.Original != "" {
		r.state.OriginalCC = l.Original
		r.state.Sysctls[ccSysctl] = l.Original
	}
	r.state.Backend = l.Backend
	r.state.ProgramIDs = appendNew(r.state.ProgramIDs, l.Programs...)
	r.state.MapIDs = appendNew(r.state.MapIDs, l.Maps...)
	r.state.SockopsProgramIDs = appendNew(r.state.SockopsProgramIDs, l.SockopsProgramIDs...)
	return r.save("datapath-loaded")
}

// opened drops the predecessor's leftovers (adopted or removed by the
// datapath's Open) from the state: only this agent's objects remain.
func (r *recovery) opened(sock string) error {
	s, l := r.state, r.last
	s.CCNames = []string{}
	if l.CCName != "" {
		s.CCNames = append(s.CCNames, l.CCName)
	}
	s.ProgramIDs, s.MapIDs = appendNew([]uint32{}, l.Programs...), appendNew([]uint32{}, l.Maps...)
	s.SockopsProgramIDs = appendNew([]uint32{}, l.SockopsProgramIDs...)
	s.Files = []string{sock}
	return r.save(StepStateUpdated)
}

// leftovers lists what the state says must be undone.
func (r *recovery) leftovers() Leftovers {
	return Leftovers{Original: r.state.OriginalCC, CCNames: r.state.CCNames, SockopsProgramIDs: r.state.SockopsProgramIDs}
}

// finish removes the state file after a clean stop (nothing left behind).
func (r *recovery) finish() error {
	if err := r.file.Remove(); err != nil {
		return err
	}
	r.hook(StepStateRemoved)
	return nil
}

// CleanupReport says what Cleanup found and did.
type CleanupReport struct {
	StateFile string
	Found     *State // nil: no state file (the last agent stopped cleanly)
	Datapath  string // what the datapath cleanup did, in words
	Removed   []string
}

// String is the report in a few lines.
func (c CleanupReport) String() string {
	var b strings.Builder
	if c.Found == nil {
		fmt.Fprintf(&b, "no state file %s (the last agent stopped cleanly or none ran)\n", c.StateFile)
	} else {
		fmt.Fprintf(&b, "state file %s: agent pid %d, started %s, last step %s, original default %q\n",
			c.StateFile, c.Found.PID, c.Found.Started.Format(time.RFC3339), c.Found.Step, c.Found.OriginalCC)
	}
	if c.Datapath != "" {
		fmt.Fprintf(&b, "%s\n", c.Datapath)
	}
	for _, f := range c.Removed {
		fmt.Fprintf(&b, "removed %s\n", f)
	}
	return b.String()
}

// Cleanup restores the network namespace after a dead agent without
// starting one (`coopcc agent cleanup`): it takes the single-instance lock
// (so it refuses while an agent runs), reads the state file, lets the
// datapath restore the original default congestion control, move sockets
// off dead instances and detach leftover programs (cleanup also works
// without a state file: an unregistered coopcc_ default is recognised),
// removes the files the agent created and finally the state file.
func Cleanup(dir string, clean func(Leftovers) (string, error)) (CleanupReport, error) {
	var rep CleanupReport
	lock, err := AcquireLock(dir)
	if err != nil {
		if errors.Is(err, ErrAlreadyRunning) {
			return rep, fmt.Errorf("%w; stop it first (it restores everything itself)", err)
		}
		return rep, err
	}
	defer lock.Release()
	id, err := NetnsID()
	if err != nil {
		return rep, err
	}
	f := NewStateFile(dir, id)
	rep.StateFile = f.Path()
	if rep.Found, err = f.Load(); err != nil {
		return rep, err
	}
	var l Leftovers
	if rep.Found != nil {
		l = Leftovers{Original: rep.Found.OriginalCC, CCNames: rep.Found.CCNames, SockopsProgramIDs: rep.Found.SockopsProgramIDs}
	}
	if rep.Datapath, err = clean(l); err != nil {
		return rep, fmt.Errorf("clean up the datapath (state file kept): %w", err)
	}
	if rep.Found != nil {
		for _, p := range rep.Found.Files {
			if err := os.Remove(p); err == nil {
				rep.Removed = append(rep.Removed, p)
			}
		}
		if err := f.Remove(); err != nil {
			return rep, err
		}
		rep.Removed = append(rep.Removed, f.Path())
	}
	return rep, nil
}
