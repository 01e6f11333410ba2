package peer

import "golang.org/x/sys/unix"

func setBroadcast(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_BROADCAST, 1) }
