package nettest

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// staleName matches the names UniqueName makes: prefix-PID-N.
var staleName = regexp.MustCompile(`^([a-z0-9][a-z0-9-]*)-([0-9]+)-([0-9]+)$`)

var sweepOnce sync.Once

// sweepStale deletes namespaces that an earlier test process created and
// could not remove because it was killed (go test -timeout, SIGKILL): their
// name carries the creator's PID, and that process no longer exists. It runs
// once per test process, before the first namespace is created.
func sweepStale() {
	sweepOnce.Do(func() {
		out, err := exec.Command("ip", "netns", "list").Output()
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			m := staleName.FindStringSubmatch(f[0])
			if m == nil {
				continue
			}
			pid, err := strconv.Atoi(m[2])
			if err != nil || pid <= 1 || processAlive(pid) {
				continue
			}
			(&NS{Name: f[0]}).destroy()
		}
	})
}

// processAlive reports whether a process with this PID exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
