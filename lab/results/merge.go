package results

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coopcc/coopcc/lab/analysis"
)

// MergeOptions says what Merge tolerates.
type MergeOptions struct {
	// AllowMixed merges directories of different scenario files, binaries
	// or run options (refused by default: their numbers do not compare).
	AllowMixed bool
}

// Merge loads several results directories (e.g. the shards of one sweep,
// `coopcc lab run --shard K/N`) as one. It refuses, unless AllowMixed, the
// directories whose meta.json differ in scenario file (SHA-256 of
// scenario.toml), coopcc binary (SHA-256, else git revision) or run options
// (--quick, --duration), and it always refuses a run id present in two
// directories. Runs a shard's meta.json lists for the scenario but no
// directory holds are noted in Warnings. One directory is Load.
func Merge(dirs []string, opt MergeOptions) (*Results, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no results directory given")
	}
	parts, err := loadParts(dirs)
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	warns, err := mixedWarnings(dirs, parts, opt.AllowMixed)
	if err != nil {
		return nil, err
	}
	out, err := mergeRuns(dirs, parts)
	if err != nil {
		return nil, err
	}
	for i, p := range parts {
		for _, w := range p.Warnings {
			warns = append(warns, dirs[i]+": "+w)
		}
	}
	if missing := missingRuns(parts, out.Runs); len(missing) > 0 {
		warns = append(warns, fmt.Sprintf("%d run(s) of the scenario are in no merged directory (a shard missing or failed): %s", len(missing), strings.Join(missing, "; ")))
	}
	ids := make([]string, 0, len(out.Runs))
	for _, r := range out.Runs {
		ids = append(ids, r.Info.ID)
	}
	out.Meta["runs"] = toAny(ids)
	out.Meta["merged_from"] = toAny(dirs)
	if shards := shardsOf(parts); len(shards) > 0 {
		out.Meta["shard"] = strings.Join(shards, ", ")
	}
	out.Warnings = warns
	return out, nil
}

// loadParts loads each directory of dirs (Load).
func loadParts(dirs []string) ([]*Results, error) {
	var parts []*Results
	for _, d := range dirs {
		r, err := Load(d)
		if err != nil {
			return nil, err
		}
		parts = append(parts, r)
	}
	return parts, nil
}

// mixedWarnings compares the parts (loaded from dirs) by mergeChecks: when
// they differ it refuses them unless allowMixed, and with allowMixed it
// returns a warning for each difference.
func mixedWarnings(dirs []string, parts []*Results, allowMixed bool) ([]string, error) {
	var mixed []string
	for _, c := range mergeChecks {
		if diff := differs(parts, c.value); diff != "" {
			mixed = append(mixed, c.what+" differs: "+diff)
		}
	}
	if len(mixed) > 0 && !allowMixed {
		return nil, fmt.Errorf("cannot merge %s:\n  %s\nmerge only results of one scenario file run by one coopcc binary with the same options "+
			"(rerun the odd directory with the same scenario file and binary), or pass --allow-mixed to merge anyway", strings.Join(dirs, ", "), strings.Join(mixed, "\n  "))
	}
	var warns []string
	for _, m := range mixed {
		warns = append(warns, "merged with --allow-mixed: "+m)
	}
	return warns, nil
}

// mergeRuns is the parts (loaded from dirs) as one Results: its directory
// the dirs joined by " + ", the first part's scenario and a copy of its
// meta, and every part's runs sorted by id. It refuses a run id present in
// two parts.
func mergeRuns(dirs []string, parts []*Results) (*Results, error) {
	out := &Results{Dir: strings.Join(dirs, " + "), Scenario: parts[0].Scenario, Meta: map[string]any{}}
	for k, v := range parts[0].Meta {
		out.Meta[k] = v
	}
	from := map[string]string{} // run id → directory
	for i, p := range parts {
		for _, r := range p.Runs {
			if d, dup := from[r.Info.ID]; dup {
				return nil, fmt.Errorf("cannot merge: run %s is in both %s and %s (the same shard merged twice, overlapping --only/--shard runs, or repetitions of separate invocations: number those apart with lab run --first-rep); keep one copy", r.Info.ID, d, dirs[i])
			}
			from[r.Info.ID] = dirs[i]
			out.Runs = append(out.Runs, r)
		}
	}
	sort.SliceStable(out.Runs, func(a, b int) bool { return out.Runs[a].Info.ID < out.Runs[b].Info.ID })
	return out, nil
}

// missingRuns is the ids, sorted, of the runs that the parts' meta.json
// list for the scenario (ShardOf) but that are not among runs.
func missingRuns(parts []*Results, runs []analysis.Run) []string {
	have := map[string]bool{}
	for _, r := range runs {
		have[r.Info.ID] = true
	}
	expected := map[string]bool{}
	for _, p := range parts {
		if p.Info != nil {
			for _, id := range p.Info.ShardOf {
				expected[id] = true
			}
		}
	}
	var missing []string
	for id := range expected {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	return missing
}

// shardsOf is the parts' shards ("K/N"), in the order of the parts, of
// those that are one.
func shardsOf(parts []*Results) []string {
	var shards []string
	for _, p := range parts {
		if p.Info != nil && p.Info.Shard != "" {
			shards = append(shards, p.Info.Shard)
		}
	}
	return shards
}

// mergeChecks are what must agree between merged directories.
var mergeChecks = []struct {
	what  string
	value func(*Results) string
}{
	{"scenario file (sha256 of scenario.toml)", func(r *Results) string {
		if r.Info != nil && r.Info.ScenarioSHA256 != "" {
			return r.Info.ScenarioSHA256
		}
		return "unknown"
	}},
	{"coopcc binary (sha256, else git revision)", func(r *Results) string {
		switch {
		case r.Info == nil:
			return "unknown"
		case r.Info.CoopccSHA256 != "":
			return r.Info.CoopccSHA256
		case r.Info.GitRevision != "":
			return "git " + r.Info.GitRevision
		}
		return "unknown"
	}},
	{"run options (--quick, --duration)", func(r *Results) string {
		if r.Info == nil {
			return "unknown"
		}
		return fmt.Sprintf("quick=%t duration=%q", r.Info.Quick, r.Info.DurationOverride)
	}},
}

// differs is "" when value is the same for every part, else "dir: value"
// for each part.
func differs(parts []*Results, value func(*Results) string) string {
	first := value(parts[0])
	same := true
	for _, p := range parts[1:] {
		same = same && value(p) == first
	}
	if same {
		return ""
	}
	var s []string
	for _, p := range parts {
		v := value(p)
		if len(v) > 16 && !strings.Contains(v, "=") {
			v = v[:12] + "…"
		}
		s = append(s, p.Dir+": "+v)
	}
	return strings.Join(s, ", ")
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
