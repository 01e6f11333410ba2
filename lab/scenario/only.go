package scenario

import (
	"fmt"
	"slices"
	"strings"
)

// SelectRuns keeps the runs whose id matches the --only filter ("" keeps
// all). A filter with "=" is a comma-separated list of key=value terms that
// must all hold, a value being one or several alternatives separated by
// "|": "mode=cubic|coop,n=10,delay=256ms" keeps cubic and coop at N = 10 and
// 256 ms (n=1 does not match n=10). Without "=" the filter is a substring of
// the id. No match is an error that says what the ids look like.
func SelectRuns(runs []Run, only string) ([]Run, error) {
	if only == "" {
		return runs, nil
	}
	var keep []Run
	for _, r := range runs {
		if matchOnly(r.ID, only) {
			keep = append(keep, r)
		}
	}
	if len(keep) == 0 {
		example := ""
		if len(runs) > 0 {
			example = fmt.Sprintf(" (ids look like %q)", runs[0].ID)
		}
		return nil, fmt.Errorf("no run id matches --only %q%s", only, example)
	}
	return keep, nil
}

// matchOnly reports whether a run id ("k=v,k=v,...") matches the filter.
func matchOnly(id, only string) bool {
	if !strings.Contains(only, "=") {
		return strings.Contains(id, only)
	}
	fields := map[string]string{}
	for _, kv := range strings.Split(id, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			fields[k] = v
		}
	}
	for _, term := range strings.Split(only, ",") {
		if term == "" {
			continue
		}
		k, alts, ok := strings.Cut(term, "=")
		v, has := fields[k]
		if !ok || !has || !slices.Contains(strings.Split(alts, "|"), v) {
			return false
		}
	}
	return true
}
