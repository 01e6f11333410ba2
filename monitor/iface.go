package monitor

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// ifaceTable maps interface indexes and local addresses to interface names,
// read with two rtnetlink dumps.
type ifaceTable struct {
	names  map[uint32]string
	byAddr map[netip.Addr]string
}

func (t *ifaceTable) load(fd int, seq *uint32, buf []byte) error {
	ne := binary.NativeEndian
	names := map[uint32]string{}
	byAddr := map[netip.Addr]string{}
	send := func(typ uint16, bodyLen int) error {
		*seq++
		req := make([]byte, nlmsgHdrLen+bodyLen)
		ne.PutUint32(req[0:], uint32(len(req)))
		ne.PutUint16(req[4:], typ)
		ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
		ne.PutUint32(req[8:], *seq)
		_, err := unix.Write(fd, req)
		return err
	}
	// RTM_GETLINK: struct ifinfomsg (16 bytes), IFLA_IFNAME.
	if err := send(unix.RTM_GETLINK, unix.SizeofIfInfomsg); err != nil {
		return fmt.Errorf("send RTM_GETLINK: %w", err)
	}
	err := readDump(fd, *seq, buf, func(typ uint16, p []byte) {
		if typ != unix.RTM_NEWLINK || len(p) < unix.SizeofIfInfomsg {
			return
		}
		idx := ne.Uint32(p[4:])
		eachAttr(p[unix.SizeofIfInfomsg:], func(at uint16, v []byte) {
			if at == unix.IFLA_IFNAME {
				names[idx] = string(cstring(v))
			}
		})
	})
	if err != nil {
		return fmt.Errorf("RTM_GETLINK dump: %w", err)
	}
	// RTM_GETADDR: struct ifaddrmsg (8 bytes), IFA_LOCAL / IFA_ADDRESS.
	if err := send(unix.RTM_GETADDR, unix.SizeofIfAddrmsg); err != nil {
		return fmt.Errorf("send RTM_GETADDR: %w", err)
	}
	err = readDump(fd, *seq, buf, func(typ uint16, p []byte) {
		if typ != unix.RTM_NEWADDR || len(p) < unix.SizeofIfAddrmsg {
			return
		}
		name := names[ne.Uint32(p[4:])]
		var local, addr netip.Addr
		eachAttr(p[unix.SizeofIfAddrmsg:], func(at uint16, v []byte) {
			a, ok := netip.AddrFromSlice(v)
			if !ok {
				return
			}
			switch at {
			case unix.IFA_LOCAL:
				local = a
			case unix.IFA_ADDRESS:
				addr = a
			}
		})
		if local.IsValid() {
			addr = local
		}
		if addr.IsValid() && name != "" {
			byAddr[addr.Unmap()] = name
		}
	})
	if err != nil {
		return fmt.Errorf("RTM_GETADDR dump: %w", err)
	}
	t.names, t.byAddr = names, byAddr
	return nil
}

func eachAttr(a []byte, fn func(typ uint16, v []byte)) {
	ne := binary.NativeEndian
	for len(a) >= 4 {
		l := int(ne.Uint16(a))
		if l < 4 || l > len(a) {
			return
		}
		fn(ne.Uint16(a[2:])&^unix.NLA_F_NESTED, a[4:l])
		al := (l + 3) &^ 3
		if al > len(a) {
			return
		}
		a = a[al:]
	}
}
