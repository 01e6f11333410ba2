// Command acktrace loads acktrace.o (built from acktrace.c by run.sh), traces
// every bulk TCP receiver of the machine for a while and prints one CSV row
// per record: a diagnostic for docs/datapath.md's "Raising a bound", not part
// of coopcc. Root (CAP_BPF and CAP_PERFMON).
//
//	go run ./experiments/acktrace OBJECT DURATION > trace.csv
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
)

// record is acktrace.c's struct ack_rec.
type record struct {
	TsNs                                           uint64
	Sock                                           uint64
	RcvSsthresh, WindowClamp, RcvWnd, Unacked, Len uint32
	Flags                                          uint16
	Event, Quick                                   uint8
}

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: acktrace OBJECT DURATION (e.g. acktrace.o 12s)")
	}
	d, err := time.ParseDuration(os.Args[2])
	if err != nil {
		log.Fatalf("duration %q: %v", os.Args[2], err)
	}
	if err := trace(os.Args[1], d); err != nil {
		log.Fatal(err)
	}
}

func trace(object string, d time.Duration) error {
	spec, err := ebpf.LoadCollectionSpec(object)
	if err != nil {
		return fmt.Errorf("read %s: %w", object, err)
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		return fmt.Errorf("load %s: %w", object, err)
	}
	defer coll.Close()
	var links []link.Link
	defer func() {
		for _, l := range links {
			_ = l.Close()
		}
	}()
	for name, p := range coll.Programs {
		l, err := link.AttachTracing(link.TracingOptions{Program: p})
		if err != nil {
			return fmt.Errorf("attach %s: %w", name, err)
		}
		links = append(links, l)
	}
	rd, err := ringbuf.NewReader(coll.Maps["events"])
	if err != nil {
		return fmt.Errorf("ring buffer: %w", err)
	}
	time.AfterFunc(d, func() { _ = rd.Close() })
	fmt.Println("t_ns,sock,event,rcv_ssthresh,window_clamp,rcv_wnd,unacked,len,flags,quick")
	for {
		rec, err := rd.Read()
		if errors.Is(err, ringbuf.ErrClosed) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		var r record
		if err := binary.Read(bytes.NewReader(rec.RawSample), binary.LittleEndian, &r); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		fmt.Printf("%d,%x,%d,%d,%d,%d,%d,%d,%#x,%d\n", r.TsNs, r.Sock, r.Event, r.RcvSsthresh, r.WindowClamp, r.RcvWnd, r.Unacked, r.Len, r.Flags, r.Quick)
	}
}
