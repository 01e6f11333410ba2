package results

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coopcc/coopcc/schema"
)

// shardDir copies the fixture into dir/name keeping the runs whose id
// contains keep, and lets edit change its meta.json.
func shardDir(t *testing.T, dir, name, keep string, edit func(*schema.Meta)) string {
	t.Helper()
	dst := filepath.Join(dir, name)
	err := filepath.WalkDir(fixture, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixture, p)
		if parts := strings.Split(rel, string(filepath.Separator)); len(parts) >= 2 && parts[0] == "runs" && !strings.Contains(parts[1], keep) {
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dst, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := schema.DecodeMeta(b)
	if err != nil {
		t.Fatal(err)
	}
	all := m.Runs
	m.ShardOf, m.Runs = all, nil
	for _, id := range all {
		if strings.Contains(id, keep) {
			m.Runs = append(m.Runs, id)
		}
	}
	m.CoopccSHA256 = "b1"
	if edit != nil {
		edit(&m)
	}
	b, _ = json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dst, "meta.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestMergeShards(t *testing.T) {
	tmp := t.TempDir()
	a := shardDir(t, tmp, "a", "mode=cubic", func(m *schema.Meta) { m.Shard = "1/2" })
	b := shardDir(t, tmp, "b", "mode=coop", func(m *schema.Meta) { m.Shard = "2/2" })
	res, err := Merge([]string{a, b}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 5 {
		t.Fatalf("%d runs, want the fixture's 5", len(res.Runs))
	}
	for i := 1; i < len(res.Runs); i++ {
		if res.Runs[i-1].Info.ID >= res.Runs[i].Info.ID {
			t.Errorf("runs not sorted by id: %s, %s", res.Runs[i-1].Info.ID, res.Runs[i].Info.ID)
		}
	}
	if res.Meta["shard"] != "1/2, 2/2" || len(res.Meta["runs"].([]any)) != 5 || res.Scenario == "" {
		t.Errorf("merged meta: %v", res.Meta)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "in no merged directory") {
			t.Errorf("complete shards reported missing: %s", w)
		}
	}

	// One shard alone: the others' runs are reported missing.
	one, err := Merge([]string{a, shardDir(t, tmp, "c", "mode=coop,n=1", nil)}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(one.Warnings, "\n"); !strings.Contains(w, "2 run(s) of the scenario are in no merged directory") || !strings.Contains(w, "mode=coop,n=2,delay=4ms,rep=2") {
		t.Errorf("missing runs not reported: %s", w)
	}
}

func TestMergeRefuses(t *testing.T) {
	tmp := t.TempDir()
	a := shardDir(t, tmp, "a", "mode=cubic", nil)
	cases := []struct {
		name string
		b    string
		want []string
	}{
		{"duplicate run", shardDir(t, tmp, "dup", "n=1", nil), []string{"run mode=cubic,n=1,delay=4ms,rep=1 is in both", "--first-rep", "keep one copy"}},
		{"other scenario", shardDir(t, tmp, "scen", "mode=coop", func(m *schema.Meta) { m.ScenarioSHA256 = "ffff0000ffff0000ffff" }),
			[]string{"scenario file (sha256 of scenario.toml) differs", "ffff0000ffff…", "--allow-mixed"}},
		{"other binary", shardDir(t, tmp, "bin", "mode=coop", func(m *schema.Meta) { m.CoopccSHA256 = "b2" }),
			[]string{"coopcc binary (sha256, else git revision) differs", "/bin: b2", "--allow-mixed"}},
		{"other options", shardDir(t, tmp, "opt", "mode=coop", func(m *schema.Meta) { m.Quick = false }),
			[]string{"run options (--quick, --duration) differs", "quick=false"}},
	}
	for _, c := range cases {
		_, err := Merge([]string{a, c.b}, MergeOptions{})
		if err == nil {
			t.Errorf("%s: merged", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q:\n%v", c.name, w, err)
			}
		}
		allowed, err := Merge([]string{a, c.b}, MergeOptions{AllowMixed: true})
		if c.name == "duplicate run" {
			if err == nil {
				t.Error("duplicate run ids merged with AllowMixed")
			}
			continue
		}
		if err != nil {
			t.Errorf("%s with AllowMixed: %v", c.name, err)
		} else if !strings.Contains(strings.Join(allowed.Warnings, "\n"), "merged with --allow-mixed") {
			t.Errorf("%s: no warning of the mixed merge: %v", c.name, allowed.Warnings)
		}
	}
}
