package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestAlertRules runs promtool on deploy/prometheus: the rules parse, and
// alerts_test.yml's synthetic series make each alert fire when it should and
// stay quiet when it should. Every alert in alerts.yml has a case there.
func TestAlertRules(t *testing.T) {
	promtool := needTool(t, "promtool", "prometheus")
	for _, args := range [][]string{
		{"check", "rules", "deploy/prometheus/alerts.yml"},
		{"test", "rules", "deploy/prometheus/alerts_test.yml"},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}
	tests := readFile(t, "deploy/prometheus/alerts_test.yml")
	for _, r := range alertRules(t) {
		if !strings.Contains(tests, "alertname: "+r.Alert+"\n") {
			t.Errorf("alert %s has no case in alerts_test.yml", r.Alert)
		}
	}
}

// alertRule is one alert of deploy/prometheus/alerts.yml.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	Annotations map[string]string `yaml:"annotations"`
}

func alertRules(t *testing.T) []alertRule {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, "deploy/prometheus/alerts.yml")), &file); err != nil {
		t.Fatal(err)
	}
	var rules []alertRule
	for _, g := range file.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatal("no alert rules in deploy/prometheus/alerts.yml")
	}
	return rules
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
