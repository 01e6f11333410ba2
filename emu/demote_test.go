package emu

import (
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// DemoteProcess leaves every thread of a process at SCHED_NORMAL.
func TestDemoteProcess(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	if os.Geteuid() == 0 {
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}
		if err := unix.SchedSetAttr(pid, &attr, 0); err != nil {
			t.Logf("could not make the child SCHED_FIFO (%v); checking the no-op case", err)
		}
	}
	if err := DemoteProcess(pid); err != nil {
		t.Fatal(err)
	}
	attr, err := unix.SchedGetAttr(pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	if attr.Policy != unix.SCHED_NORMAL {
		t.Fatalf("policy %d after demotion", attr.Policy)
	}
	if err := DemoteProcess(1 << 30); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}
