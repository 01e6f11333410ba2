package datapath

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// tcpCANameMax is TCP_CA_NAME_MAX (16, including the NUL).
const tcpCANameMax = 16

// randomCCName returns coopcc_ + 8 hex digits (15 characters).
func randomCCName() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random cc name: %w", err)
	}
	return "coopcc_" + hex.EncodeToString(b[:]), nil
}

// setStructOpsName rewrites the name member of the struct_ops map's initial
// value, so every instance registers under its own name.
func setStructOpsName(ms *ebpf.MapSpec, name string) error {
	if len(name) == 0 || len(name) >= tcpCANameMax {
		return fmt.Errorf("congestion control name %q: must be 1..%d characters", name, tcpCANameMax-1)
	}
	st, ok := ms.Value.(*btf.Struct)
	if !ok {
		return fmt.Errorf("struct_ops map %s: value is %T, not a struct", ms.Name, ms.Value)
	}
	if len(ms.Contents) != 1 {
		return fmt.Errorf("struct_ops map %s: %d initial values, want 1", ms.Name, len(ms.Contents))
	}
	buf, ok := ms.Contents[0].Value.([]byte)
	if !ok {
		return fmt.Errorf("struct_ops map %s: initial value is %T", ms.Name, ms.Contents[0].Value)
	}
	for _, m := range st.Members {
		if m.Name != "name" {
			continue
		}
		off := int(m.Offset.Bytes())
		if off+tcpCANameMax > len(buf) {
			return fmt.Errorf("struct_ops map %s: name member out of range", ms.Name)
		}
		field := buf[off : off+tcpCANameMax]
		clear(field)
		copy(field, name)
		return nil
	}
	return fmt.Errorf("struct_ops map %s: no name member", ms.Name)
}

// NewCCName returns a fresh congestion-control name, coopcc_ + 8 random hex
// digits (15 characters, the kernel's limit). The agent records it before
// Open so that a crash at any later step leaves a name to clean up.
func NewCCName() (string, error) { return randomCCName() }

// openStructOps loads coopcc_cubic under a unique name, registers it, makes
// it the namespace's default, adopts dead instances' sockets and optionally
// switches existing connections.
func openStructOps(opts Options) (d *Datapath, err error) {
	objs, name, err := loadStructOps(opts)
	if err != nil {
		return nil, err
	}
	var undo []func() error
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				_ = undo[i]()
			}
		}
	}()
	undo = append(undo, objs.Close)
	ids := collectIDs(objs.CoopccCubic, objs.CoopccBnd, objs.CoopccCfg, objs.CoopccCnt, objs.CoopccInit, objs.CoopccSsthresh, objs.CoopccCongAvoid, objs.CoopccSetState, objs.CoopccCwndEvent, objs.CoopccPktsAcked, objs.CoopccUndoCwnd)
	cur, err := readDefaultCC(opts.Netns)
	if err != nil {
		return nil, err
	}
	old, dead, err := restoreTarget(opts.Netns, cur, opts.Original, opts.Adopt)
	if err != nil {
		return nil, err
	}
	if opts.OnLoaded != nil {
		if err := opts.OnLoaded(Loaded{Backend: BackendStructOps, CCName: name, Objects: ids, Original: old}); err != nil {
			return nil, fmt.Errorf("record loaded objects: %w", err)
		}
	}
	opts.step(StepLoaded)

	reg, err := link.AttachStructOps(link.StructOpsOptions{Map: objs.CoopccCubic})
	if errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("register congestion control %s: the name is taken (another instance?): %w", name, err)
	}
	if err != nil {
		return nil, &unsupportedError{fmt.Errorf("register congestion control %s: %w", name, err)}
	}
	undo = append(undo, reg.Close)
	opts.step(StepRegistered)

	if err := writeDefaultCC(opts.Netns, name); err != nil {
		return nil, err
	}
	undo = append(undo, func() error { return writeDefaultCC(opts.Netns, old) })
	opts.step(StepDefaultSet)

	// Sockets moved to this instance go back to plain CUBIC if the start
	// fails from here on.
	undo = append(undo, func() error {
		_, err := switchCC(opts.Netns, name, "", "cubic")
		return err
	})
	adopted, switched, err := takeOverSockets(opts, name, old, dead)
	if err != nil {
		return nil, err
	}
	d = &Datapath{
		backend:  BackendStructOps,
		ccName:   name,
		bounds:   objs.CoopccBnd,
		config:   objs.CoopccCfg,
		counters: objs.CoopccCnt,
		switched: switched,
		adopted:  adopted,
		original: old,
		objIDs:   ids,
	}
	d.closeFn = closeStructOps(opts, name, old, reg, objs)
	return d, nil
}

// loadStructOps loads the bounded CUBIC's BPF objects under the
// congestion-control name of opts (a random one if none is given); it
// needs the kernel's BTF.
func loadStructOps(opts Options) (objs *cubicObjects, name string, err error) {
	name = opts.CCName
	if name == "" {
		if name, err = randomCCName(); err != nil {
			return nil, "", err
		}
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		return nil, "", &unsupportedError{fmt.Errorf("struct_ops needs kernel BTF (/sys/kernel/btf/vmlinux): %w", err)}
	}
	spec, err := loadCubic()
	if err != nil {
		return nil, "", fmt.Errorf("parse coopcc_cubic object: %w", err)
	}
	ops := spec.Maps["coopcc_cubic"]
	if err := setStructOpsName(ops, name); err != nil {
		return nil, "", err
	}
	// The struct_ops map carries the CC name too, so `bpftool map show`
	// and `bpftool struct_ops show` name the instance.
	ops.Name = name
	objs = new(cubicObjects)
	if err := spec.LoadAndAssign(objs, nil); err != nil {
		return nil, "", &unsupportedError{fmt.Errorf("load coopcc_cubic (struct_ops, CUBIC kfuncs; `coopcc clamp --probe` says what is missing): %w", explainLoadError(err))}
	}
	return objs, name, nil
}

// takeOverSockets moves to the registered congestion control name the
// sockets a dead instance (its names dead) left and, with
// opts.SwitchExisting, the connections on the previous default old or on
// plain CUBIC; and it detaches a dead instance's sockops programs.
func takeOverSockets(opts Options, name, old string, dead []string) (adopted, switched SwitchResult, err error) {
	// Sockets that survived a crashed predecessor run its dead programs,
	// which see a stale heartbeat and bound nothing: move them to this
	// instance, whatever SwitchExisting says (they were bounded before).
	if adopted, err = adoptSockets(opts.Netns, dead, name); err != nil {
		return adopted, switched, err
	}
	// A dead instance's sockops programs (its receive side, docs/datapath.md).
	if _, err := detachSockops(opts.AdoptPrograms); err != nil {
		return adopted, switched, fmt.Errorf("detach a dead instance's sockops programs: %w", err)
	}
	opts.step(StepAdopted)
	if !opts.SwitchExisting {
		return adopted, switched, nil
	}
	// Connections on the previous default or on plain CUBIC move to the
	// bounded CUBIC; others (e.g. a flow that chose bbr) are left alone.
	// [interpretation] switching a non-CUBIC default too matches what
	// happens to new connections, which all get the bounded CUBIC.
	if switched, err = switchCC(opts.Netns, old, "cubic", name); err != nil {
		return adopted, switched, fmt.Errorf("switch existing connections from %s to %s: %w", old, name, err)
	}
	opts.step(StepSwitched)
	return adopted, switched, nil
}

// closeStructOps is the struct_ops datapath's Close: the default congestion
// control back to old, every socket on name back to plain CUBIC, the
// registration and the BPF objects gone.
func closeStructOps(opts Options, name, old string, reg link.Link, objs *cubicObjects) func() error {
	return func() error {
		var errs []error
		if err := writeDefaultCC(opts.Netns, old); err != nil {
			errs = append(errs, err)
		}
		opts.step(StepDefaultRestored)
		// Sockets still on our CC hold references to the BPF programs:
		// move them to plain CUBIC (the same algorithm, unbounded) so that
		// nothing stays loaded.
		if _, err := switchCC(opts.Netns, name, "", "cubic"); err != nil {
			errs = append(errs, fmt.Errorf("switch connections back from %s to cubic: %w", name, err))
		}
		opts.step(StepSwitchedBack)
		if err := reg.Close(); err != nil {
			errs = append(errs, fmt.Errorf("unregister %s: %w", name, err))
		}
		opts.step(StepUnregistered)
		if err := objs.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close BPF objects: %w", err))
		}
		return errors.Join(errs...)
	}
}

// explainLoadError keeps load errors on one line (a verifier error prints
// its last log lines only; the full log is in the wrapped error) and says
// what to do about missing privileges.
func explainLoadError(err error) error {
	if errors.Is(err, unix.EPERM) {
		return fmt.Errorf("%w (BPF needs root / CAP_BPF + CAP_NET_ADMIN and an unlocked kernel)", err)
	}
	return err
}
