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

// A typo'd variable is refused with the nearest name (issue 22: with
// REDLOCK_BACKEND set, the proxy served in-memory locks); other variables
// and the known ones pass.
func TestUnknownEnvironmentVariables(t *testing.T) {
	err := CheckEnviron([]string{"PATH=/bin", "REDLOCK_BACKENDS=a:1", "REDLOCK_CONFIG=/c.yaml", "REDLOCK_BACKEND=127.0.0.1:7001", "REDLOCK_LSITEN=x", "REDLOCK_WHATEVER=1"})
	for _, want := range []string{
		"unknown environment variable REDLOCK_BACKEND (did you mean REDLOCK_BACKENDS?)",
		"unknown environment variable REDLOCK_LSITEN (did you mean REDLOCK_LISTEN?)",
		"unknown environment variable REDLOCK_WHATEVER;",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckEnviron = %v; want it to say %q", err, want)
		}
	}
	if err := CheckEnviron([]string{"HOME=/root", "REDLOCK_BACKENDS=", "REDLOCK_LISTEN=0.0.0.0:6380", "REDLOCK_CONFIG=c"}); err != nil {
		t.Errorf("known variables refused: %v", err)
	}
}

// With no backends, the embedded in-memory ones serve loopback only unless
// embedded_public says otherwise (issue 22: the image, or a typo'd
// variable, served in-memory locks on 0.0.0.0).
func TestEmbeddedServesLoopbackOnly(t *testing.T) {
	for _, tt := range []struct {
		args []string
		ok   bool
	}{
		{nil, true},
		{[]string{"-listen", "localhost:6380"}, true},
		{[]string{"-listen", "[::1]:6380"}, true},
		{[]string{"-listen", "127.0.0.2:6380"}, true},
		{[]string{"-listen", "0.0.0.0:6393"}, false},
		{[]string{"-listen", ":6380"}, false},
		{[]string{"-listen", "10.1.2.3:6380"}, false},
		{[]string{"-listen", "proxy.example:6380"}, false},
		{[]string{"-listen", "0.0.0.0:6393", "-embedded-public", "true"}, true},
		{[]string{"-listen", "0.0.0.0:6393", "-backends", "10.0.0.1:6379"}, true},
	} {
		_, err := Load(tt.args, func(string) string { return "" }, io.Discard)
		if tt.ok != (err == nil) {
			t.Errorf("%q: %v; want ok %v", tt.args, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "REDLOCK_BACKENDS") {
			t.Errorf("%q: %v; want it to say how to give backends", tt.args, err)
		}
	}
}
