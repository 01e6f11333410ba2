package agent

import (
	"net"
	"os"
)

// SDNotify sends a state line to systemd when run as a Type=notify service
// (NOTIFY_SOCKET set); otherwise it does nothing.
func SDNotify(state string) {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return
	}
	if path[0] == '@' {
		path = "\x00" + path[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return
	}
	defer c.Close()
	_, _ = c.Write([]byte(state))
}
