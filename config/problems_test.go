package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Configuration errors name the setting, say what is wanted in plain words,
// suggest the nearest key, and never show a password (issue 13).
func TestConfigErrorsExplainThemselves(t *testing.T) {
	dir := t.TempDir()
	n := 0
	file := func(body string) string {
		n++
		p := filepath.Join(dir, fmt.Sprint("c", n, ".yaml"))
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		args       []string
		want, hide string
	}{
		{[]string{"-backends", "redis://:hunter2@[bad"}, "-backends", "hunter2"},
		{[]string{"-backends", "redis://app:hunter2@10.0.0.1:6379,bad:port:x"}, "backends[1]", "hunter2"},
		{[]string{"-node-timeout", "5x"}, "want a duration such as 250ms", "time:"},
		{[]string{"-max-clients", "x"}, "want a whole number", "strconv"},
		{[]string{"-config", file("backend:\n  - 127.0.0.1:6379\n")}, `unknown setting "backend" (did you mean "backends"?)`, "config.Config"},
		{[]string{"-config", file("max_clients: lots\n")}, `"lots" is not a whole number`, "!!str"},
	}
	for _, tt := range tests {
		_, err := Load(tt.args, func(string) string { return "" }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), tt.hide) {
			t.Errorf("%q: %v; want it to say %q and not %q", tt.args, err, tt.want, tt.hide)
		}
	}
	_, err := Load(nil, func(k string) string {
		if k == "REDLOCK_REQUIREPASS" {
			return "s3cret"
		}
		if k == "REDLOCK_MAX_TTL" {
			return "forever"
		}
		return ""
	}, io.Discard)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("an env error = %v; it must not show the password", err)
	}
}
