package datapath

import "errors"

func openSockops(opts Options) (*Datapath, error) {
	return nil, errors.New("sockops backend: not implemented yet")
}
