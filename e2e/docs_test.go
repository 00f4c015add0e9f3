package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// settingsTable is the README's table of settings, made from the code.
func settingsTable() string {
	var b strings.Builder
	b.WriteString("| yaml key | flag | environment | default | meaning |\n|---|---|---|---|---|\n")
	for _, d := range config.Docs() {
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | `%s` | %s |\n", d.Key, d.Flag, d.Env, d.Default, d.Usage)
	}
	return b.String()
}

func TestREADMEListsEverySetting(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := settingsTable(); !strings.Contains(string(readme), want) {
		t.Fatalf("README.md's settings table is out of date; it should read:\n%s", want)
	}
	for _, cmd := range []string{"go run .", "bash .ci/run"} {
		if !strings.Contains(string(readme), cmd) {
			t.Errorf("README.md does not show %q", cmd)
		}
	}
}

// TestREADMEListsEveryINFOField: every field of INFO's # Redlock section,
// and of its per-backend lines, is named in the README.
func TestREADMEListsEveryINFOField(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	h := harness.New(t, 3, nil)
	info, err := h.Client().Info(t.Context(), "redlock").Result()
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, line := range strings.Split(info, "\r\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(name, "backend") || name == "backends" || name == "backends_usable" {
			fields = append(fields, name)
			continue
		}
		for _, kv := range strings.Split(value, ",") {
			k, _, _ := strings.Cut(kv, "=")
			fields = append(fields, k)
		}
	}
	if len(fields) < 10 {
		t.Fatalf("INFO redlock has too few fields to be right: %q", info)
	}
	for _, f := range fields {
		if !strings.Contains(string(readme), "`"+f+"`") {
			t.Errorf("README.md does not name INFO redlock's field `%s`", f)
		}
	}
}

// TestREADMEForNewcomers: what an adopter looks for first (issue 22): the
// minimum Go version as go.mod says it, both commands' durations, a table of
// contents that reaches every section, a production checklist, a license
// and a changelog.
func TestREADMEForNewcomers(t *testing.T) {
	read := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	readme, gomod := read("README.md"), read("go.mod")
	goVersion := ""
	for _, line := range strings.Split(gomod, "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			goVersion = strings.TrimSpace(v)
		}
	}
	wants := []string{
		"**Go " + goVersion + " or later**",
		"`go run .` serves within", "`bash .ci/run` takes\nabout 20-25 minutes on 2 cores",
		"## Production checklist", "N >= 5", "appendfsync always", "once with `redlock-proxy bootstrap`", "requirepass",
		"tls_cert", "private `http_listen`", "reachable by the proxies only", "**Alerts**",
	}
	for _, want := range wants {
		if goVersion == "" || !strings.Contains(readme, want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
	inFence := false
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		title, ok := strings.CutPrefix(line, "## ")
		if !ok {
			title, ok = strings.CutPrefix(line, "### ")
		}
		if inFence || !ok || title == "Contents" {
			continue
		}
		anchor := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				return unicode.ToLower(r)
			}
			return -1
		}, title)
		if !strings.Contains(readme, "](#"+anchor+")") {
			t.Errorf("README.md's contents do not link %q (#%s)", title, anchor)
		}
	}
	if l := read("LICENSE"); !strings.Contains(l, "Apache License\n                           Version 2.0") || !strings.Contains(l, "Copyright 2026 The redlock-proxy authors") {
		t.Error("LICENSE is not Apache-2.0 with the authors' copyright")
	}
	if c := read("CHANGELOG.md"); !strings.Contains(c, "[Keep a Changelog]") || !strings.Contains(c, "## [Unreleased]") {
		t.Error("CHANGELOG.md does not follow Keep a Changelog")
	}
}
