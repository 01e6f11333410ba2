package main

import (
	"context"
	"errors"
	"io"

	"github.com/coopcc/coopcc/monitor"
)

func runTrace(ctx context.Context, out io.Writer, opts monitor.Options, record string) error {
	return errors.New("--trace is not implemented yet")
}
