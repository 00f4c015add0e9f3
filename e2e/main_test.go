// Package e2e holds the end-to-end tests: real redis-server backends, real
// client libraries and proxy replicas (in-process through
// internal/harness, or as child processes the fault suite can SIGSTOP).
// The top-level redcon_test.go is the headline test of the RESP endpoint.
package e2e

import (
	"log/slog"
	"os"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/internal/app"
)

// childEnv makes the test binary run as a proxy process: the fault suite
// needs a second replica it can pause with SIGSTOP.
const childEnv = "REDLOCK_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := app.Run(os.Args[1:], func(string) string { return "" }, os.Stderr); err != nil {
			slog.Error("child proxy", "err", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(fencedClientEnv) == "1" {
		fencedClient(os.Args[1], os.Args[2])
		os.Exit(0)
	}
	// The tests read and write the repository's files (README.md,
	// compat/, SAFETY.md) by their paths from its root.
	if err := os.Chdir(".."); err != nil {
		slog.Error("e2e", "err", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
