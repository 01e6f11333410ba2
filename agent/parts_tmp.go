package agent

// TEMPORARY until monitor, datapath, peer and policy are in main: RealParts
// then builds them (parts.go) and this file is deleted.

import (
	"context"
	"errors"
	"io"
	"log/slog"
)

var errNotWired = errors.New("this build of coopcc has no monitor/datapath/peer/policy yet")

// RealParts returns the parts built from the real packages.
func RealParts() Parts {
	return Parts{
		OpenFlows:    func(Config) (FlowSource, io.Closer, error) { return nil, nil, errNotWired },
		OpenDatapath: func(Config) (Enforcer, error) { return nil, errNotWired },
		StartPeers: func(context.Context, Config, func() PeerStatus, *slog.Logger) (PeerNode, func() error, error) {
			return nil, nil, errNotWired
		},
		NewPolicy: func(Config) (Policy, error) { return nil, errNotWired },
	}
}
