package agent

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v2"
)

// alertRules is the shape of a Prometheus rules file, as much of it as the
// shipped alerts use.
type alertRules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// TestShippedAlertsNameExportedMetrics: every rule of
// deploy/prometheus/coopcc-alerts.yml has a name, an expression, a severity
// and both annotations, and every coopcc_* metric an expression names is one
// the agent exports (an alert on a renamed metric never fires).
func TestShippedAlertsNameExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../deploy/prometheus/coopcc-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f alertRules
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		t.Fatalf("coopcc-alerts.yml: %v", err)
	}
	exported := exportedMetrics(t)
	name := regexp.MustCompile(`coopcc_[a-z0-9_]+`)
	rules := 0
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			rules++
			if r.Alert == "" || r.Expr == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("rule %+v: want alert, expr, summary and description", r)
			}
			if s := r.Labels["severity"]; !slices.Contains([]string{"info", "warning", "critical"}, s) {
				t.Errorf("%s: severity %q, want info, warning or critical", r.Alert, s)
			}
			for _, m := range name.FindAllString(r.Expr, -1) {
				if !slices.Contains(exported, m) {
					t.Errorf("%s: %s is no metric of the agent's (%s)", r.Alert, m, strings.Join(exported, ", "))
				}
			}
		}
	}
	if rules < 5 {
		t.Errorf("%d rules", rules)
	}
	// The expressions' syntax: promtool, where it is installed (Debian's
	// prometheus package; not a dependency of the build).
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed: the rules' PromQL is not checked")
		return
	}
	if out, err := exec.Command(promtool, "check", "rules", "../deploy/prometheus/coopcc-alerts.yml").CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}

// exportedMetrics lists the coopcc_* metric names the agent's collector
// describes.
func exportedMetrics(t *testing.T) []string {
	t.Helper()
	ch := make(chan *prometheus.Desc, 64)
	agentCollector{}.Describe(ch)
	close(ch)
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	var names []string
	for d := range ch {
		m := fq.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the name of %s", d)
		}
		names = append(names, m[1])
	}
	return names
}
