// Package ktime reads the clock of the kernel's BPF programs
// (bpf_ktime_get_ns: CLOCK_MONOTONIC, in nanoseconds), for user space that
// writes times BPF programs compare against theirs (leases, expiries) or
// converts the times they report.
package ktime

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Now returns CLOCK_MONOTONIC in nanoseconds, as bpf_ktime_get_ns does.
func Now() (uint64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, fmt.Errorf("read CLOCK_MONOTONIC: %w", err)
	}
	return uint64(ts.Nano()), nil
}
