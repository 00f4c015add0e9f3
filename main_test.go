package main

import (
	"log/slog"
	"os"
	"testing"
)

// childEnv makes the test binary run as a proxy process: the fault suite
// needs a second replica it can pause with SIGSTOP.
const childEnv = "REDLOCK_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := run(os.Args[1:], func(string) string { return "" }, os.Stderr); err != nil {
			slog.Error("child proxy", "err", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
