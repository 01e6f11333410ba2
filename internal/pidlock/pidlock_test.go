package pidlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAcquireReleaseAndHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.lock")
	l, err := Acquire(path, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(path, false)
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second Acquire: %v, want ErrHeld naming pid %d", err, os.Getpid())
	}
	// A waiter gets it once the holder releases.
	got := make(chan error, 1)
	go func() {
		l2, err := Acquire(path, true)
		if err == nil {
			err = l2.Release()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("waiter returned while the lock was held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not get the lock after release")
	}
}
