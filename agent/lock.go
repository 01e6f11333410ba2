package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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

// InstanceLock is the single-instance lock: an flock on
// <dir>/agent-<netns inode>.lock, released by the kernel when the process
// dies, so a crash never leaves a stale lock.
type InstanceLock struct{ f *os.File }

// ErrAlreadyRunning is returned when another agent holds the lock.
var ErrAlreadyRunning = errors.New("another coopcc agent is already running in this network namespace")

// AcquireLock takes the lock or returns ErrAlreadyRunning (with the holder's pid).
func AcquireLock(dir string) (*InstanceLock, error) {
	id, err := NetnsID()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lock directory: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("agent-%d.lock", id))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(b))
			if _, perr := strconv.Atoi(pid); perr == nil {
				return nil, fmt.Errorf("%w (pid %s, lock %s)", ErrAlreadyRunning, pid, path)
			}
			return nil, fmt.Errorf("%w (lock %s)", ErrAlreadyRunning, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &InstanceLock{f: f}, nil
}

// Release drops the lock (the file stays; it is reused next time).
func (l *InstanceLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	err := l.f.Close()
	l.f = nil
	return err
}
