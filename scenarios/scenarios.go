// Package scenarios embeds the lab's preset scenario files (TOML) in the
// coopcc binary: `coopcc lab run NAME` finds them here by name.
package scenarios

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.toml
var files embed.FS

// Names returns the names of the embedded presets, sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".toml"); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Get returns the TOML text of the preset name.
func Get(name string) ([]byte, error) {
	data, err := files.ReadFile(name + ".toml")
	if err != nil {
		return nil, fmt.Errorf("no preset scenario %q (presets: %s)", name, strings.Join(Names(), ", "))
	}
	return data, nil
}
