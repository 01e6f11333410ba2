// Package pidlock is a single-instance lock: an flock(2) on a file that also
// holds the owner's PID, so that a second instance can say who holds it. The
// kernel releases the lock when the owner dies, so a crash never leaves a
// stale lock behind.
package pidlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrHeld is returned (wrapped, with the holder's PID) when another process
// holds the lock.
var ErrHeld = errors.New("lock held by another process")

// Lock is a held lock.
type Lock struct{ f *os.File }

// Acquire takes the lock at path, creating the file and its directory. With
// wait it blocks until the lock is free; without, it fails at once with an
// error wrapping ErrHeld that names the holder's PID.
func Acquire(path string, wait bool) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err = unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			if pid := strings.TrimSpace(string(b)); pid != "" {
				if _, perr := strconv.Atoi(pid); perr == nil {
					return nil, fmt.Errorf("%w (pid %s, lock %s)", ErrHeld, pid, path)
				}
			}
			return nil, fmt.Errorf("%w (lock %s)", ErrHeld, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lock{f: f}, nil
}

// Release drops the lock (the file stays; it is reused next time).
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	err := l.f.Close()
	l.f = nil
	return err
}
