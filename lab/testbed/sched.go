package testbed

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// threadSched is one thread's scheduling state, from /proc/PID/task/TID/stat
// (proc(5)): what a process that does not answer its signals is doing —
// running (R) and using CPU, runnable but starved (R, no CPU), or blocked.
type threadSched struct {
	tid    int
	comm   string
	state  string // R running or runnable, S sleeping, D uninterruptible, …
	ticks  uint64 // user + system time, clock ticks
	cpu    int    // the CPU it last ran on
	rtPrio int    // real-time priority (0 for ordinary threads)
	policy int    // unix.SCHED_NORMAL, unix.SCHED_FIFO, …
}

// parseThreadStat parses one /proc/…/stat line. The command name is in
// parentheses and may itself hold spaces and parentheses: the fields after
// it start after the last ')'.
func parseThreadStat(line string) (threadSched, error) {
	open, closing := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || closing < open {
		return threadSched{}, fmt.Errorf("stat line %q: no (comm)", line)
	}
	tid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	if err != nil {
		return threadSched{}, fmt.Errorf("stat line %q: pid: %w", line, err)
	}
	rest := strings.Fields(line[closing+1:]) // rest[0] is field 3 (state)
	if len(rest) < 39 {
		return threadSched{}, fmt.Errorf("stat line %q: %d fields after comm, want >= 39", line, len(rest))
	}
	num := func(field int) uint64 {
		v, _ := strconv.ParseUint(rest[field-3], 10, 64)
		return v
	}
	return threadSched{
		tid: tid, comm: line[open+1 : closing], state: rest[0],
		ticks: num(14) + num(15), cpu: int(num(39)), rtPrio: int(num(40)), policy: int(num(41)),
	}, nil
}

// readThreads returns the scheduling state of every thread of pid (those
// that end while it reads are skipped).
func readThreads(pid int) ([]threadSched, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list threads of %d: %w", pid, err)
	}
	var out []threadSched
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "stat"))
		if err != nil {
			continue
		}
		ts, err := parseThreadStat(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, err
		}
		out = append(out, ts)
	}
	return out, nil
}

// policyName names a scheduling policy number (sched(7)).
func policyName(p int) string {
	switch p {
	case unix.SCHED_NORMAL:
		return "normal"
	case unix.SCHED_FIFO:
		return "fifo"
	case unix.SCHED_RR:
		return "rr"
	case unix.SCHED_BATCH:
		return "batch"
	case unix.SCHED_IDLE:
		return "idle"
	case unix.SCHED_DEADLINE:
		return "deadline"
	}
	return strconv.Itoa(p)
}

// writeSchedReport writes what every thread of pid did over the interval
// between two readings, one line each: its state, policy and priority at
// the second, and the CPU time it used in between (running threads that use
// none are starved; sleeping ones are blocked). Every thread of another
// process that runs at a real-time priority and used CPU is listed too: the
// usual cause of a real-time process's starvation.
func writeSchedReport(w io.Writer, pid int, interval time.Duration) {
	before, err := readThreads(pid)
	if err != nil {
		fmt.Fprintf(w, "lab: scheduling state: %v\n", err)
		return
	}
	others := otherRealtime(pid)
	time.Sleep(interval)
	after, err := readThreads(pid)
	if err != nil {
		fmt.Fprintf(w, "lab: scheduling state: %v\n", err)
		return
	}
	fmt.Fprintf(w, "lab: the threads of %d over %v (state, policy/priority, CPU time used, last CPU):\n", pid, interval)
	writeThreadDeltas(w, before, after, interval, false)
	fmt.Fprintf(w, "lab: real-time threads of other processes that ran or wanted to over the same %v:\n", interval)
	writeThreadDeltas(w, others, otherRealtime(pid), interval, true)
}

// writeThreadDeltas writes one line per thread of after, with the CPU time
// it used since before (threads not in before: since they started); busy:
// only those that used some or are runnable (the machine's idle real-time
// kernel threads are not news).
func writeThreadDeltas(w io.Writer, before, after []threadSched, interval time.Duration, busy bool) {
	prev := make(map[int]uint64, len(before))
	for _, t := range before {
		prev[t.tid] = t.ticks
	}
	for _, t := range after {
		used := time.Duration(t.ticks-min(prev[t.tid], t.ticks)) * time.Second / clockTicks
		if busy && used == 0 && t.state != "R" {
			continue
		}
		fmt.Fprintf(w, "  %d %-16s %s %s/%d used %v of %v, cpu %d\n",
			t.tid, t.comm, t.state, policyName(t.policy), t.rtPrio, used, interval, t.cpu)
	}
}

// clockTicks is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTicks = 100

// otherRealtime returns the threads of every process but pid that run at a
// real-time policy (FIFO or RR).
func otherRealtime(pid int) []threadSched {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var out []threadSched
	for _, p := range procs {
		n, err := strconv.Atoi(filepath.Base(p))
		if err != nil || n == pid {
			continue
		}
		ts, err := readThreads(n)
		if err != nil {
			continue
		}
		for _, t := range ts {
			if t.policy == unix.SCHED_FIFO || t.policy == unix.SCHED_RR {
				out = append(out, t)
			}
		}
	}
	return out
}
