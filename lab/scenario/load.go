package scenario

import (
	"fmt"
	"os"
	"strings"

	"github.com/coopcc/coopcc/scenarios"
)

// Load returns the scenario named by arg: the path of a TOML file when arg
// ends in .toml or names an existing file, else an embedded preset.
func Load(arg string) (*Scenario, error) {
	if strings.HasSuffix(arg, ".toml") || strings.ContainsRune(arg, os.PathSeparator) {
		return LoadFile(arg)
	}
	if _, err := os.Stat(arg); err == nil {
		return LoadFile(arg)
	}
	data, err := scenarios.Get(arg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v; or give the path of a .toml file", ErrUnknown, err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", arg, err)
	}
	return s, nil
}

// Presets parses every embedded preset, in name order.
func Presets() ([]*Scenario, error) {
	var out []*Scenario
	for _, n := range scenarios.Names() {
		s, err := Load(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
