package app

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// `redlock-proxy bootstrap` marks fresh backends once, says so and exits;
// run again it refuses, naming every backend and why.
func TestBootstrapSubcommand(t *testing.T) {
	backends := redistest.Start(t, 3)
	args := []string{"bootstrap", "-backends", strings.Join(redistest.Addrs(backends), ",")}
	var out bytes.Buffer
	if err := Run(args, func(string) string { return "" }, &out); err != nil {
		t.Fatalf("first bootstrap: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "bootstrap done: 3 backends marked") {
		t.Fatalf("first bootstrap said:\n%s", out.String())
	}
	err := Run(args, func(string) string { return "" }, &out)
	if !errors.Is(err, ErrBootstrap) || strings.Count(err.Error(), "never bootstrapped again") != 3 {
		t.Fatalf("second bootstrap = %v; want refused for each backend", err)
	}
}
