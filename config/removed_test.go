package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// initial_cluster_state is gone (issue 23 B): left on, it marked restarted
// backends as new. Each way of setting it is refused, saying what to do.
func TestRemovedSettingIsRefusedWithTheRemedy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("initial_cluster_state: new\nmax_ttl: 1m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, load := range map[string]func() error{
		"yaml": func() error { _, err := Load([]string{"-config", path}, env(nil), &bytes.Buffer{}); return err },
		"env": func() error {
			_, err := Load(nil, env(map[string]string{"REDLOCK_INITIAL_CLUSTER_STATE": "existing"}), &bytes.Buffer{})
			return err
		},
		"flag": func() error {
			_, err := Load([]string{"-initial-cluster-state", "new"}, env(nil), &bytes.Buffer{})
			return err
		},
	} {
		err := load()
		for _, want := range []string{"config:", "initial", "removed", "redlock-proxy bootstrap", "wait out the restart quarantine"} {
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(want)) {
				t.Fatalf("%s: %v; want it to say %q", name, err, want)
			}
		}
	}
}
