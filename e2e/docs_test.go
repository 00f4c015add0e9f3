package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

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
