package agent

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Capability bits (linux/capability.h).
const (
	capNetAdmin = 12
	capSysAdmin = 21
	capBPF      = 39
)

// checkPrivileges says clearly when the agent cannot work because it lacks
// privileges, before anything fails deeper down with a bare "permission
// denied" (the lock file under /run/coopcc, the BPF objects, the namespace's
// default congestion control).
func checkPrivileges() error {
	eff, err := effectiveCaps("/proc/self/status")
	if err != nil {
		return nil // cannot tell: let the real operation report
	}
	return missingCaps(eff)
}

// missingCaps returns an error naming what is missing from the effective
// capability set eff: CAP_NET_ADMIN and CAP_BPF (CAP_SYS_ADMIN stands for
// CAP_BPF on kernels before 5.8).
func missingCaps(eff uint64) error {
	has := func(bit uint) bool { return eff&(1<<bit) != 0 }
	var miss []string
	if !has(capNetAdmin) {
		miss = append(miss, "CAP_NET_ADMIN")
	}
	if !has(capBPF) && !has(capSysAdmin) {
		miss = append(miss, "CAP_BPF")
	}
	if len(miss) == 0 {
		return nil
	}
	return fmt.Errorf("coopcc agent needs root: it loads BPF programs and changes the network namespace's congestion control, "+
		"and this process lacks %s; run it as root (sudo coopcc agent ...) or as the systemd service (deploy/systemd)", strings.Join(miss, " and "))
}

// effectiveCaps reads the CapEff line of a /proc/PID/status file.
func effectiveCaps(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no CapEff line", path)
}
