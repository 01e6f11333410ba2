package datapath

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// sockopsDrain is how long Close keeps the sockops program attached after
// expiring the lease, so active flows get their clamp reset.
const sockopsDrain = 300 * time.Millisecond

// cgroup2Root returns where the cgroup v2 hierarchy is mounted.
func cgroup2Root() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint options ... - fstype source superopts
		fields := strings.Fields(sc.Text())
		for i, fld := range fields {
			if fld == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return fields[4], nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read mounts: %w", err)
	}
	return "", errors.New("cgroup v2 is not mounted (mount -t cgroup2 none /sys/fs/cgroup/unified)")
}

// netnsCookie returns the cookie of the named namespace ("" = the caller's),
// read with SO_NETNS_COOKIE from a socket created inside it.
func netnsCookie(ns string) (uint64, error) {
	var cookie uint64
	err := inNetns(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		defer unix.Close(fd)
		v, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
		if err != nil {
			return fmt.Errorf("getsockopt SO_NETNS_COOKIE: %w", err)
		}
		cookie = v
		return nil
	})
	return cookie, err
}

// openSockops attaches the TCP_BPF_SNDCWND_CLAMP program to the root cgroup
// v2, restricted to the namespace's sockets by its netns cookie.
func openSockops(opts Options) (*Datapath, error) {
	root, err := cgroup2Root()
	if err != nil {
		return nil, err
	}
	cookie, err := netnsCookie(opts.Netns)
	if err != nil {
		return nil, fmt.Errorf("namespace cookie: %w", err)
	}
	spec, err := loadSockops()
	if err != nil {
		return nil, fmt.Errorf("parse sockops object: %w", err)
	}
	if err := spec.Variables["netns_cookie"].Set(cookie); err != nil {
		return nil, fmt.Errorf("set netns_cookie: %w", err)
	}
	var objs sockopsObjects
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return nil, fmt.Errorf("load sockops program: %w", explainLoadError(err))
	}
	l, err := link.AttachCgroup(link.CgroupOptions{Path: root, Attach: ebpf.AttachCGroupSockOps, Program: objs.CoopccSockops})
	if err != nil {
		_ = objs.Close()
		return nil, fmt.Errorf("attach sockops to cgroup %s: %w", root, err)
	}
	d := &Datapath{
		backend:  BackendSockops,
		bounds:   objs.CoopccBnd,
		config:   objs.CoopccCfg,
		counters: objs.CoopccCnt,
		objIDs:   collectIDs(objs.CoopccBnd, objs.CoopccCfg, objs.CoopccCnt, objs.CoopccSkclamp, objs.CoopccSockops),
	}
	d.closeFn = func() error {
		// A clamp set on a socket stays there after the program is gone.
		// Close has already expired the lease, so the program resets the
		// clamp of every flow that receives an ACK now: give active flows a
		// moment before detaching. Flows idle at Close keep their last clamp
		// until they end (documented in docs/datapath.md).
		time.Sleep(sockopsDrain)
		return errors.Join(l.Close(), objs.Close())
	}
	return d, nil
}
