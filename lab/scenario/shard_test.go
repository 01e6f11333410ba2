package scenario

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	if s, err := ParseShard("2/4"); err != nil || s != (Shard{2, 4}) || s.String() != "2/4" {
		t.Errorf("2/4: %+v %v", s, err)
	}
	for _, bad := range []string{"", "2", "0/4", "5/4", "a/b", "1/0", "-1/2"} {
		if _, err := ParseShard(bad); err == nil || !strings.Contains(err.Error(), "K/N") {
			t.Errorf("%q: %v, want an error naming K/N", bad, err)
		}
	}
}

// The shards of a sweep are disjoint, cover it, are balanced, keep the
// expansion order and do not depend on it.
func TestShardSelect(t *testing.T) {
	var runs, reversed []Run
	for i := 0; i < 11; i++ {
		runs = append(runs, Run{ID: fmt.Sprintf("mode=m%d,n=%d,rep=1", i%3, i)})
	}
	for i := len(runs) - 1; i >= 0; i-- {
		reversed = append(reversed, runs[i])
	}
	seen := map[string]int{}
	for k := 1; k <= 4; k++ {
		sh := Shard{k, 4}
		got, err := sh.Select(runs)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) < 2 || len(got) > 3 {
			t.Errorf("shard %v: %d runs, want 2 or 3 of 11", sh, len(got))
		}
		again, _ := sh.Select(reversed)
		if len(again) != len(got) {
			t.Errorf("shard %v depends on the order of the runs", sh)
		}
		for i, r := range got {
			seen[r.ID]++
			if i > 0 && indexOf(runs, r.ID) < indexOf(runs, got[i-1].ID) {
				t.Errorf("shard %v does not keep the expansion order", sh)
			}
		}
		for _, r := range again {
			if !containsID(got, r.ID) {
				t.Errorf("shard %v: %s only when the runs come reversed", sh, r.ID)
			}
		}
	}
	if len(seen) != len(runs) {
		t.Errorf("shards cover %d of %d runs", len(seen), len(runs))
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("%s in %d shards", id, c)
		}
	}
	if all, _ := (Shard{}).Select(runs); len(all) != len(runs) {
		t.Error("the zero shard is not the whole sweep")
	}
	if _, err := (Shard{5, 12}).Select(runs[:3]); err == nil || !strings.Contains(err.Error(), "at most 3 shards") {
		t.Errorf("empty shard: %v", err)
	}
}

func indexOf(runs []Run, id string) int {
	for i, r := range runs {
		if r.ID == id {
			return i
		}
	}
	return -1
}

func containsID(runs []Run, id string) bool { return indexOf(runs, id) >= 0 }
