package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// StateVersion is the version of the state file's format.
const StateVersion = 1

// State is what an agent changed in its network namespace, recorded in
// <lock_dir>/state-<netns inode>.json before it changes it, so that a later
// start or `coopcc agent cleanup` can restore the namespace after a crash
// (SIGKILL, OOM, power loss of a container). The file is removed after a
// clean stop; its presence at start means the previous agent died.
type State struct {
	Version    int       `json:"version"`
	PID        int       `json:"pid"`
	NetnsInode uint64    `json:"netns_inode"`
	Started    time.Time `json:"started"`
	// Step is the last start-up or shut-down step recorded.
	Step string `json:"step"`
	// OriginalCC is net.ipv4.tcp_congestion_control before any coopcc
	// agent ran in the namespace (carried over from a dead predecessor's
	// state, never a coopcc_ name).
	OriginalCC string `json:"original_cc"`
	// Sysctls are the original values of every sysctl the agent changes.
	Sysctls map[string]string `json:"sysctls"`
	// Backend is the datapath backend asked for or in use.
	Backend string `json:"backend"`
	// CCNames are the congestion controls registered by this agent and by
	// dead predecessors not yet cleaned up.
	CCNames []string `json:"cc_names"`
	// ProgramIDs and MapIDs are the kernel IDs of the BPF objects (this
	// agent's and dead predecessors' not yet cleaned up).
	ProgramIDs []uint32 `json:"program_ids"`
	MapIDs     []uint32 `json:"map_ids"`
	// SockopsProgramIDs are sockops programs attached to the cgroup root,
	// which outlive the process.
	SockopsProgramIDs []uint32 `json:"sockops_program_ids"`
	// Pins are BPF filesystem pins (the datapath pins nothing today: its
	// objects live as long as the process, the namespace default and the
	// sockets that use them).
	Pins []string `json:"pins"`
	// Files are files the agent creates (status socket), removed at stop.
	Files []string `json:"files"`
}

// ccSysctl names the one sysctl the datapath changes.
const ccSysctl = "net.ipv4.tcp_congestion_control"

// StateFile is the state file of one network namespace.
type StateFile struct{ path string }

// NewStateFile returns the state file <dir>/state-<netns inode>.json.
func NewStateFile(dir string, netns uint64) StateFile {
	return StateFile{path: filepath.Join(dir, fmt.Sprintf("state-%d.json", netns))}
}

// Path returns the file's path.
func (f StateFile) Path() string { return f.path }

// Load reads the state; a missing file is (nil, nil).
func (f StateFile) Load() (*State, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state file: %w", err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("state file %s: %w", f.path, err)
	}
	if s.Version != StateVersion {
		return nil, fmt.Errorf("state file %s: version %d, this agent reads %d", f.path, s.Version, StateVersion)
	}
	return &s, nil
}

// Save writes the state atomically: a temporary file in the same
// directory, fsync, rename over the old one, fsync of the directory. A
// crash leaves either the old or the new state, never a torn one.
func (f StateFile) Save(s *State) error {
	s.Version = StateVersion
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(f.path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename: no-op
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write state file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("replace state file: %w", err)
	}
	return syncDir(dir)
}

// Remove deletes the state file (a missing one is not an error).
func (f StateFile) Remove() error {
	if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove state file: %w", err)
	}
	return syncDir(filepath.Dir(f.path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open state directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync state directory: %w", err)
	}
	return nil
}

// inherit returns a new state for this process that keeps a dead
// predecessor's leftovers (names, objects) until they are cleaned up, and
// its original default congestion control.
func inherit(pred *State, pid int, netns uint64, now time.Time) *State {
	s := &State{PID: pid, NetnsInode: netns, Started: now, Sysctls: map[string]string{},
		CCNames: []string{}, ProgramIDs: []uint32{}, MapIDs: []uint32{}, SockopsProgramIDs: []uint32{},
		Pins: []string{}, Files: []string{}}
	if pred == nil {
		return s
	}
	s.OriginalCC = pred.OriginalCC
	for k, v := range pred.Sysctls {
		s.Sysctls[k] = v
	}
	s.CCNames = appendNew(s.CCNames, pred.CCNames...)
	s.ProgramIDs = appendNew(s.ProgramIDs, pred.ProgramIDs...)
	s.MapIDs = appendNew(s.MapIDs, pred.MapIDs...)
	s.SockopsProgramIDs = appendNew(s.SockopsProgramIDs, pred.SockopsProgramIDs...)
	s.Pins = appendNew(s.Pins, pred.Pins...)
	s.Files = appendNew(s.Files, pred.Files...)
	return s
}

// appendNew appends the values not in s yet.
func appendNew[T comparable](s []T, vs ...T) []T {
	for _, v := range vs {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}
