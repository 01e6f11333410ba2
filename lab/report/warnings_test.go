package report

import (
	"reflect"
	"testing"
)

func TestSummarizeWarnings(t *testing.T) {
	in := []string{
		"meta.json missing: no metadata",
		"mode=a,rep=1: emu/ missing",
		"mode=b,rep=1: emu/ missing",
		"mode=b,rep=1: flows.csv missing",
	}
	want := []string{
		"meta.json missing: no metadata",
		"emu/ missing (2 runs, e.g. mode=a,rep=1)",
		"mode=b,rep=1: flows.csv missing",
	}
	if got := SummarizeWarnings(in); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
