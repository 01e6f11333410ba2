package scenario

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Shard is one part of a sweep split across machines: shard K of N
// (1 ≤ K ≤ N). The zero Shard is the whole sweep.
type Shard struct {
	K, N int
}

// ParseShard reads "K/N" (e.g. "2/4", the form of a Slurm array index over
// its count).
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want K/N, e.g. 1/4", s)
	}
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil || ni < 1 || ki < 1 || ki > ni {
		return Shard{}, fmt.Errorf("shard %q: want K/N with 1 ≤ K ≤ N, e.g. 1/4", s)
	}
	return Shard{K: ki, N: ni}, nil
}

// IsZero reports whether the shard is the whole sweep.
func (s Shard) IsZero() bool { return s.N == 0 }

// String is "K/N" ("" for the whole sweep).
func (s Shard) String() string {
	if s.IsZero() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// Select returns the runs of shard K of N, in their expansion order. The
// runs are ordered by run id and dealt out in turn (the i-th id in that
// order goes to shard i mod N + 1): the N shards are disjoint, together hold
// every run, differ in size by at most one, and depend only on the set of
// run ids, so every machine of a job array computes the same split. It fails
// when the shard would be empty.
func (s Shard) Select(runs []Run) ([]Run, error) {
	if s.IsZero() {
		return runs, nil
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	sort.Strings(ids)
	mine := map[string]bool{}
	for i := s.K - 1; i < len(ids); i += s.N {
		mine[ids[i]] = true
	}
	var out []Run
	for _, r := range runs {
		if mine[r.ID] {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("shard %s has no runs: the scenario expands to %d runs; use at most %d shards", s, len(runs), len(runs))
	}
	return out, nil
}
