package e2e

// The README's client snippets run as printed (issue 22), against a proxy
// over real redis-servers: only the port changes, 6380 for the harness's.

import (
	"context"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// readmeBlock is the README's first fenced block of lang that contains
// marker.
func readmeBlock(t *testing.T, lang, marker string) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(string(readme), "```"+lang+"\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		if strings.Contains(block, marker) {
			return block
		}
	}
	t.Fatalf("README.md has no %s block with %q", lang, marker)
	return ""
}

func runSnippet(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func TestREADMEPythonSnippetRuns(t *testing.T) {
	if out, err := exec.Command("/usr/bin/python3", "-c", "import redis").CombinedOutput(); err != nil {
		t.Fatalf("Debian's python3-redis is needed (apt-get install python3-redis; .ci/run does this): %v: %s", err, out)
	}
	h := harness.New(t, 3, nil)
	code := readmeBlock(t, "python", "LOCK.ACQUIRE")
	code = strings.ReplaceAll(code, "port=6380", "port="+port(t, h.Addr))
	runSnippet(t, ".", "/usr/bin/python3", "-c", code)
}

func TestREADMENodeSnippetRuns(t *testing.T) {
	if _, err := os.Stat("compat/node/node_modules/ioredis"); err != nil {
		t.Fatal("compat/node has no node_modules: run (cd compat/node && npm ci); .ci/run does this")
	}
	h := harness.New(t, 3, nil)
	code := readmeBlock(t, "js", "LOCK.ACQUIRE")
	code = strings.ReplaceAll(code, "new Redis(6380)", "new Redis("+port(t, h.Addr)+")")
	// In compat/node, where its import of ioredis resolves (not a *.test.mjs:
	// TestNodeClients does not pick it up).
	file := filepath.Join("compat", "node", ".readme-snippet-"+strconv.Itoa(os.Getpid())+".mjs")
	if err := os.WriteFile(file, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(file) })
	runSnippet(t, ".", "node", file)
}

// TestGoExampleDialsAnAddress: the client package's example is code a user's
// module can compile: it dials an address, and imports nothing internal.
func TestGoExampleDialsAnAddress(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "client/example_test.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); strings.Contains(path, "/internal/") {
			t.Errorf("client/example_test.go imports %s, which a user's module cannot", path)
		}
	}
}
