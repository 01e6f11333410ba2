package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runCLI runs the coopcc command tree with args and returns everything it printed.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCLIWithInput(t, "", args...)
}

// runCLIWithInput is runCLI with stdin.
func runCLIWithInput(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}
