package e2e

import (
	"os"
	"os/exec"
	"testing"
)

// needTool returns the path of a command a test runs (promtool, prometheus).
// Missing, the test is skipped with a loud message on a developer's machine
// and FAILS when CI=true: .ci/run installs it, so there it must be present.
func needTool(t *testing.T, name, debianPackage string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := "!!! " + name + " not found: install the Debian package " + debianPackage + " (apt-get install -y " + debianPackage + "); .ci/run does"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
