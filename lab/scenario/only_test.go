package scenario

import "testing"

func TestSelectRuns(t *testing.T) {
	ids := []string{"mode=cubic,n=1,delay=4ms,rep=1", "mode=coop,n=1,delay=4ms,rep=1", "mode=cubic,n=10,delay=4ms,rep=1",
		"mode=coop,n=10,delay=256ms,rep=1", "mode=bbr,n=10,delay=256ms,rep=1"}
	var runs []Run
	for _, id := range ids {
		runs = append(runs, Run{ID: id})
	}
	for _, c := range []struct {
		only string
		want []int
	}{
		{"", []int{0, 1, 2, 3, 4}},
		{"n=1", []int{0, 1}}, // exact value: not n=10
		{"mode=cubic|coop,n=10", []int{2, 3}},
		{"delay=256ms,", []int{3, 4}},
		{"coop", []int{1, 3}}, // substring, as before
	} {
		got, err := SelectRuns(runs, c.only)
		if err != nil {
			t.Fatalf("%q: %v", c.only, err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("%q: %d runs, want %d", c.only, len(got), len(c.want))
		}
		for i, w := range c.want {
			if got[i].ID != ids[w] {
				t.Errorf("%q: run %d is %s, want %s", c.only, i, got[i].ID, ids[w])
			}
		}
	}
	if _, err := SelectRuns(runs, "mode=vegas"); err == nil {
		t.Error("a filter matching nothing was accepted")
	}
}
