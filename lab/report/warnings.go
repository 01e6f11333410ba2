package report

import (
	"fmt"
	"strings"
)

// SummarizeWarnings folds the loader's per-run warnings ("<run-id>: message")
// that share a message into one line naming how many runs it concerns, so
// that a sweep without an emulator does not print the same line a hundred
// times. Other warnings are kept as they are, in order.
func SummarizeWarnings(ws []string) []string {
	type group struct {
		msg  string
		runs []string
	}
	var order []*group
	byMsg := map[string]*group{}
	var out []string
	for _, w := range ws {
		run, msg, ok := strings.Cut(w, ": ")
		if !ok || !strings.Contains(run, "=") { // not "<run-id>: …"
			out = append(out, w)
			continue
		}
		g, seen := byMsg[msg]
		if !seen {
			g = &group{msg: msg}
			byMsg[msg] = g
			order = append(order, g)
		}
		g.runs = append(g.runs, run)
	}
	for _, g := range order {
		if len(g.runs) == 1 {
			out = append(out, g.runs[0]+": "+g.msg)
			continue
		}
		out = append(out, fmt.Sprintf("%s (%d runs, e.g. %s)", g.msg, len(g.runs), g.runs[0]))
	}
	return out
}
