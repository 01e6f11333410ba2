// Package buildinfo reports which source a coopcc binary was built from.
package buildinfo

import "runtime/debug"

// Revision returns the full VCS revision that `go build` stamped into the
// binary, with "-dirty" when the tree had uncommitted changes, or "" when the
// binary carries none (e.g. `go run`, or a build outside a git checkout).
func Revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}
