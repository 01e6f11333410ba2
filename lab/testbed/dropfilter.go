package testbed

import (
	"errors"
	"fmt"
	"math"
	"net"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"

	"github.com/coopcc/coopcc/internal/nsenter"
)

// DropFilter drops a share of the IPv4 UDP datagrams to one port on a
// node's interface, as it receives them, sends them, or both: a small BPF
// program on the interface's TCX hooks (kernel ≥ 6.6) that draws
// bpf_get_prandom_u32 per matching datagram. It needs neither nft nor
// iptables (absent on the lab machine) nor tc's classifier modules. The lab
// uses it for the drop fault on the status port (docs/scenarios.md, Faults).
type DropFilter struct {
	prog   *ebpf.Program
	counts *ebpf.Map // array of 2 u64: datagrams matched, dropped
	links  []link.Link
}

// TCX verdicts (include/uapi/linux/bpf.h).
const (
	tcxNext = -1 // continue with the next program, then the stack
	tcxDrop = 2
)

// newDropProgram loads the filter program: IPv4 (Ethernet framing, as on
// the lab's TAPs and veths), UDP, first fragment, destination port port;
// dropped when a uniform 32-bit draw is below fraction × 2³².
func newDropProgram(port uint16, fraction float64) (*ebpf.Program, *ebpf.Map, error) {
	if !(fraction > 0 && fraction <= 1) {
		return nil, nil, fmt.Errorf("drop fraction %v: want (0, 1]", fraction)
	}
	counts, err := ebpf.NewMap(&ebpf.MapSpec{Name: "coopcc_dropcnt", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 2})
	if err != nil {
		return nil, nil, fmt.Errorf("drop filter: create counter map: %w", err)
	}
	threshold := int64(math.Round(fraction * (1 << 32)))              // 2³² for 1: every draw is below
	be16 := func(v uint16) int32 { return int32(v>>8 | v<<8&0xff00) } // network order read as a little-endian u16
	count := func(key int32, label string) asm.Instructions {
		return asm.Instructions{
			asm.StoreImm(asm.RFP, -4, int64(key), asm.Word),
			asm.LoadMapPtr(asm.R1, counts.FD()),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, label),
			asm.Mov.Imm(asm.R1, 1),
			asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		}
	}
	load := func(off asm.Register, stack int16, size int32) asm.Instructions {
		// bpf_skb_load_bytes(skb, off, r10+stack, size); pass on failure.
		return asm.Instructions{
			asm.Mov.Reg(asm.R1, asm.R6),
			asm.Mov.Reg(asm.R2, off),
			asm.Mov.Reg(asm.R3, asm.RFP),
			asm.Add.Imm(asm.R3, int32(stack)),
			asm.Mov.Imm(asm.R4, size),
			asm.FnSkbLoadBytes.Call(),
			asm.JNE.Imm(asm.R0, 0, "pass"),
		}
	}
	var insns asm.Instructions
	add := func(is ...asm.Instruction) { insns = append(insns, is...) }
	add(asm.Mov.Reg(asm.R6, asm.R1))
	// EtherType at 12.
	add(asm.Mov.Imm(asm.R7, 12))
	add(load(asm.R7, -8, 2)...)
	add(asm.LoadMem(asm.R0, asm.RFP, -8, asm.Half), asm.JNE.Imm(asm.R0, be16(0x0800), "pass"))
	// IPv4 header (20 bytes) at 14 into r10-32.
	add(asm.Mov.Imm(asm.R7, 14))
	add(load(asm.R7, -32, 20)...)
	add(asm.LoadMem(asm.R0, asm.RFP, -32+9, asm.Byte), asm.JNE.Imm(asm.R0, 17, "pass")) // UDP
	// Fragment offset (13 bits of bytes 6-7) must be 0: later fragments carry no UDP header.
	add(asm.LoadMem(asm.R0, asm.RFP, -32+6, asm.Half), asm.And.Imm(asm.R0, be16(0x1fff)), asm.JNE.Imm(asm.R0, 0, "pass"))
	// Destination port at 14 + IHL×4 + 2.
	add(asm.LoadMem(asm.R7, asm.RFP, -32, asm.Byte), asm.And.Imm(asm.R7, 0x0f), asm.LSh.Imm(asm.R7, 2), asm.Add.Imm(asm.R7, 16))
	add(load(asm.R7, -8, 2)...)
	add(asm.LoadMem(asm.R0, asm.RFP, -8, asm.Half), asm.JNE.Imm(asm.R0, be16(port), "pass"))
	add(count(0, "matched")...)
	add(asm.FnGetPrandomU32.Call().WithSymbol("matched"))
	add(asm.LoadImm(asm.R1, threshold, asm.DWord), asm.JGE.Reg(asm.R0, asm.R1, "pass"))
	add(count(1, "drop")...)
	add(asm.Mov.Imm(asm.R0, tcxDrop).WithSymbol("drop"), asm.Return())
	add(asm.Mov.Imm(asm.R0, tcxNext).WithSymbol("pass"), asm.Return())
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "coopcc_drop", Type: ebpf.SchedCLS, License: "GPL", Instructions: insns})
	if err != nil {
		counts.Close()
		return nil, nil, fmt.Errorf("drop filter: load program: %w", err)
	}
	return prog, counts, nil
}

// DropUDP attaches a DropFilter to nd's interface: ingress (datagrams it
// receives), egress (it sends) or both, dropping fraction of the IPv4 UDP
// datagrams to port. Close detaches it; the testbed's namespaces going away
// detaches it too.
func (tb *Testbed) DropUDP(nd Node, port uint16, ingress, egress bool, fraction float64) (*DropFilter, error) {
	if !ingress && !egress {
		return nil, errors.New("drop filter: neither ingress nor egress")
	}
	prog, counts, err := newDropProgram(port, fraction)
	if err != nil {
		return nil, err
	}
	f := &DropFilter{prog: prog, counts: counts}
	err = nsenter.Do(nd.Netns, func() error {
		ifi, err := net.InterfaceByName(nd.Iface)
		if err != nil {
			return fmt.Errorf("drop filter: %s in %s: %w", nd.Iface, nd.Netns, err)
		}
		for _, h := range []struct {
			on bool
			at ebpf.AttachType
		}{{ingress, ebpf.AttachTCXIngress}, {egress, ebpf.AttachTCXEgress}} {
			if !h.on {
				continue
			}
			l, err := link.AttachTCX(link.TCXOptions{Interface: ifi.Index, Program: prog, Attach: h.at})
			if err != nil {
				return fmt.Errorf("drop filter: attach to %s %v in %s (needs TCX, Linux ≥ 6.6): %w", nd.Iface, h.at, nd.Netns, err)
			}
			f.links = append(f.links, l)
		}
		return nil
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Counts returns how many datagrams the filter matched and dropped so far.
func (f *DropFilter) Counts() (matched, dropped uint64, err error) {
	if err := f.counts.Lookup(uint32(0), &matched); err != nil {
		return 0, 0, fmt.Errorf("drop filter counts: %w", err)
	}
	if err := f.counts.Lookup(uint32(1), &dropped); err != nil {
		return 0, 0, fmt.Errorf("drop filter counts: %w", err)
	}
	return matched, dropped, nil
}

// Close detaches the filter and frees it. Safe to call more than once.
func (f *DropFilter) Close() error {
	var errs []error
	for _, l := range f.links {
		errs = append(errs, l.Close())
	}
	f.links = nil
	if f.prog != nil {
		errs = append(errs, f.prog.Close())
		f.prog = nil
	}
	if f.counts != nil {
		errs = append(errs, f.counts.Close())
		f.counts = nil
	}
	return errors.Join(errs...)
}
