package agent

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/coopcc/coopcc/internal/pidlock"
	"golang.org/x/sys/unix"
)

// NetnsID returns the inode of the current network namespace
// (/proc/self/ns/net), which keys the lock and the default socket path, so
// that one agent runs per network namespace (the lab runs one per station
// namespace on one host).
func NetnsID() (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/net", &st); err != nil {
		return 0, fmt.Errorf("stat /proc/self/ns/net: %w", err)
	}
	return st.Ino, nil
}

// DefaultStatusSocket is the status socket path when none is configured:
// /run/coopcc/agent-<netns inode>.sock.
func DefaultStatusSocket() (string, error) {
	id, err := NetnsID()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("/run/coopcc/agent-%d.sock", id), nil
}

// ErrAlreadyRunning is returned when another agent holds the lock.
var ErrAlreadyRunning = errors.New("another coopcc agent is already running in this network namespace")

// AcquireLock takes the single-instance lock <dir>/agent-<netns inode>.lock
// (internal/pidlock: released by the kernel when the process dies) or
// returns ErrAlreadyRunning with the holder's pid.
func AcquireLock(dir string) (*pidlock.Lock, error) {
	id, err := NetnsID()
	if err != nil {
		return nil, err
	}
	l, err := pidlock.Acquire(filepath.Join(dir, fmt.Sprintf("agent-%d.lock", id)), false)
	if errors.Is(err, pidlock.ErrHeld) {
		return nil, fmt.Errorf("%w: %s", ErrAlreadyRunning, strings.TrimPrefix(err.Error(), pidlock.ErrHeld.Error()+" "))
	}
	return l, err
}
