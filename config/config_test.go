package config

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadPriority(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	yml := `listen: 0.0.0.0:7000
node_timeout: 300ms
max_ttl: 1h
drift_factor: 0.02
backends:
  - 10.0.0.1:6379
  - addr: /run/redis.sock
    password: s3cret
`
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(
		[]string{"-config", path, "-node-timeout", "400ms"},
		env(map[string]string{"REDLOCK_NODE_TIMEOUT": "350ms", "REDLOCK_DRIFT_FACTOR": "0.03"}),
		&bytes.Buffer{},
	)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"listen from file", cfg.Listen, "0.0.0.0:7000"},
		{"max_ttl from file", cfg.MaxTTL, time.Hour},
		{"drift_factor: env over file", cfg.DriftFactor, 0.03},
		{"node_timeout: flag over env over file", cfg.NodeTimeout, 400 * time.Millisecond},
		{"default kept", cfg.MaxClients, 10000},
		{"backend as string", cfg.Backends[0], Backend{Addr: "10.0.0.1:6379"}},
		{"backend as mapping", cfg.Backends[1], Backend{Addr: "/run/redis.sock", Password: "s3cret"}},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestBackendsFlag(t *testing.T) {
	cfg, err := Load([]string{"-backends", "127.0.0.1:1, redis://u:p@127.0.0.1:2,unix:///tmp/r.sock,/tmp/s.sock"}, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Backend{{Addr: "127.0.0.1:1"}, {Addr: "127.0.0.1:2", Username: "u", Password: "p"}, {Addr: "/tmp/r.sock"}, {Addr: "/tmp/s.sock"}}
	if len(cfg.Backends) != len(want) {
		t.Fatalf("backends = %+v", cfg.Backends)
	}
	for i := range want {
		if cfg.Backends[i] != want[i] {
			t.Errorf("backends[%d] = %+v, want %+v", i, cfg.Backends[i], want[i])
		}
	}
	if cfg.Backends[2].Network() != "unix" || cfg.Backends[0].Network() != "tcp" {
		t.Error("network not derived from the address")
	}
}

func TestValidateNamesField(t *testing.T) {
	tests := []struct {
		mutate func(*Config)
		field  string
	}{
		{func(c *Config) { c.Listen = "nope" }, "listen"},
		{func(c *Config) { c.Backends = []Backend{{Addr: "h:1"}, {Addr: "h:1"}} }, "backends[1]"},
		{func(c *Config) { c.Backends = []Backend{{Addr: "relative.sock"}} }, "backends[0]"},
		{func(c *Config) { c.Embedded = 0 }, "embedded"},
		{func(c *Config) { c.DriftFactor = 0.6 }, "drift_factor"},
		{func(c *Config) { c.TimeoutFactor = 0 }, "timeout_factor"},
		{func(c *Config) { c.MaxTTL = 0 }, "max_ttl"},
		{func(c *Config) { c.MaxTTL = -time.Second }, "max_ttl"},
		{func(c *Config) { c.NodeTimeout = 20 * time.Minute }, "node_timeout"},
		{func(c *Config) { c.DefaultTTL = time.Hour }, "default_ttl"},
		{func(c *Config) { c.BoundLease = time.Hour }, "bound_lease"},
		{func(c *Config) { c.BoundLease = time.Second }, "bound_lease"}, // below three 500ms ticks
		{func(c *Config) { c.BoundLease = -time.Second }, "bound_lease"},
		{func(c *Config) { c.MaxClients = 0 }, "max_clients"},
		{func(c *Config) { c.MaxRequestSize = 10 }, "max_request_size"},
		{func(c *Config) { c.ShutdownGrace = -1 }, "shutdown_grace"},
		{func(c *Config) { c.Scripts = []Script{{SHA1: "xyz", Meaning: "release"}} }, "scripts[0]"},
		{func(c *Config) { c.Scripts = []Script{{SHA1: strings.Repeat("a", 40), Meaning: "steal"}} }, "scripts[0]"},
		{func(c *Config) {
			c.Users = []User{{Name: "a", Password: "p", Prefix: "a:"}, {Name: "ab", Password: "p", Prefix: "a:b:"}}
		}, "users[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			c := Default()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), "config: "+tt.field+":") {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tt.field)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-node-timeout", "soon"},
		{"-config", "/does/not/exist.yaml"},
		{"stray"},
		{"-max-ttl", "0s"},
	} {
		if _, err := Load(args, env(nil), &bytes.Buffer{}); err == nil {
			t.Errorf("Load(%q) succeeded", args)
		}
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	_ = os.WriteFile(path, []byte("no_such_setting: 1\n"), 0o600)
	if _, err := Load([]string{"-config", path}, env(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no_such_setting") {
		t.Errorf("unknown YAML key: %v", err)
	}
}

func TestHelpDocumentsEverySetting(t *testing.T) {
	var out bytes.Buffer
	_, err := Load([]string{"-h"}, env(nil), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Load(-h) = %v", err)
	}
	for _, d := range Docs() {
		line := d.Flag + "\n"
		if !strings.Contains(out.String(), line) || !strings.Contains(out.String(), "default "+d.Default+"; env "+d.Env) {
			t.Errorf("-h does not document %s with its default %s:\n%s", d.Flag, d.Default, out.String())
		}
	}
}

func TestWarnings(t *testing.T) {
	c := Default()
	c.Backends = []Backend{{Addr: "a:1"}, {Addr: "b:1"}, {Addr: "c:1"}, {Addr: "d:1"}}
	if w := c.Warnings(); len(w) != 1 || !strings.Contains(w[0], "even") {
		t.Fatalf("Warnings() = %q", w)
	}
}
