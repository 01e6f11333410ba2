package datapath

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf/link"
	"github.com/coopcc/coopcc/internal/nsenter"
)

// SwitchResult counts what one iterator pass did.
type SwitchResult struct{ Switched, Failed uint64 }

func ccNameBytes(name string) ([tcpCANameMax]byte, error) {
	var b [tcpCANameMax]byte
	if len(name) == 0 || len(name) >= tcpCANameMax {
		return b, fmt.Errorf("congestion control name %q: must be 1..%d characters", name, tcpCANameMax-1)
	}
	copy(b[:], name)
	return b, nil
}

// switchCC moves every full TCP socket of the namespace whose congestion
// control is from or from2 ("" = unused) to to, with a BPF TCP iterator opened inside that
// namespace (the iterator only sees the namespace it is opened in).
func switchCC(ns, from, from2, to string) (SwitchResult, error) {
	var res SwitchResult
	fromB, err := ccNameBytes(from)
	if err != nil {
		return res, err
	}
	var from2B [tcpCANameMax]byte
	if from2 != "" {
		if from2B, err = ccNameBytes(from2); err != nil {
			return res, err
		}
	}
	toB, err := ccNameBytes(to)
	if err != nil {
		return res, err
	}
	spec, err := loadSwitchcc()
	if err != nil {
		return res, fmt.Errorf("parse switch_cc object: %w", err)
	}
	if err := spec.Variables["from_cc"].Set(fromB); err != nil {
		return res, fmt.Errorf("set from_cc: %w", err)
	}
	if err := spec.Variables["from_cc2"].Set(from2B); err != nil {
		return res, fmt.Errorf("set from_cc2: %w", err)
	}
	if err := spec.Variables["to_cc"].Set(toB); err != nil {
		return res, fmt.Errorf("set to_cc: %w", err)
	}
	var objs switchccObjects
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return res, fmt.Errorf("load TCP iterator: %w", explainLoadError(err))
	}
	defer objs.Close()
	it, err := link.AttachIter(link.IterOptions{Program: objs.CoopccSwitchCc})
	if err != nil {
		return res, fmt.Errorf("attach TCP iterator: %w", err)
	}
	defer it.Close()
	err = nsenter.Do(ns, func() error {
		r, err := it.Open()
		if err != nil {
			return fmt.Errorf("open TCP iterator: %w", err)
		}
		defer r.Close()
		if _, err := io.Copy(io.Discard, r); err != nil {
			return fmt.Errorf("run TCP iterator: %w", err)
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	if err := objs.Switched.Get(&res.Switched); err != nil {
		return res, fmt.Errorf("read switched count: %w", err)
	}
	if err := objs.Failed.Get(&res.Failed); err != nil {
		return res, fmt.Errorf("read failed count: %w", err)
	}
	return res, nil
}
