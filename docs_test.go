package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/config"
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
