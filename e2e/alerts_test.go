package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"unicode"

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

// TestAlertRunbooks: every alert names its runbook, a section of
// docs/OPERATIONS.md that says what it means, what to check and what to do;
// every link inside that document to one of its sections resolves.
func TestAlertRunbooks(t *testing.T) {
	const prefix = "https://github.com/redlock-proxy/redlock-proxy/blob/main/docs/OPERATIONS.md#"
	doc := readFile(t, "docs/OPERATIONS.md")
	sections := map[string]string{} // anchor -> text up to the next heading
	var anchor string
	for _, line := range strings.Split(doc, "\n") {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			anchor = githubAnchor(strings.TrimLeft(h, "# "))
			sections[anchor] = ""
			continue
		}
		if anchor != "" {
			sections[anchor] += line + "\n"
		}
	}
	for _, r := range alertRules(t) {
		a, ok := strings.CutPrefix(r.Annotations["runbook_url"], prefix)
		if !ok {
			t.Errorf("alert %s: runbook_url %q is not a section of docs/OPERATIONS.md", r.Alert, r.Annotations["runbook_url"])
			continue
		}
		body, ok := sections[a]
		if !ok {
			t.Errorf("alert %s: docs/OPERATIONS.md has no section #%s", r.Alert, a)
			continue
		}
		for _, part := range []string{"**Means:**", "**Check", "**Do:**"} {
			if !strings.Contains(body, part) {
				t.Errorf("runbook #%s (alert %s) lacks %s", a, r.Alert, part)
			}
		}
		if r.Annotations["summary"] == "" {
			t.Errorf("alert %s has no summary", r.Alert)
		}
	}
	for _, m := range regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllStringSubmatch(doc, -1) {
		if _, ok := sections[m[1]]; !ok {
			t.Errorf("docs/OPERATIONS.md links to #%s, which is no section of it", m[1])
		}
	}
}

// githubAnchor is the anchor GitHub gives a Markdown heading.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
