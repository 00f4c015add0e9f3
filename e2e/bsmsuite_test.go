package e2e

// bsm/redislock's own test suite through the proxy (issue 31). Its test
// files ship in its Go module and dial 127.0.0.1:6379, database 9. The
// .ci/run stage "bsm/redislock's own suite" sets bsmSuiteEnv: the test
// starts real redis-servers and a proxy listening on 127.0.0.1:6379, runs
// `go test` on a writable copy of the module from the module cache (its own
// go.mod and committed go.sum, -mod=readonly), and compares every test's
// outcome with e2e/testdata/bsm_redislock_suite.txt.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

const (
	bsmSuiteEnv      = "REDLOCK_BSM_SUITE" // "1": run it
	bsmSuiteModule   = "github.com/bsm/redislock"
	bsmSuiteExpected = "e2e/testdata/bsm_redislock_suite.txt"
	bsmSuiteAddr     = "127.0.0.1:6379" // where the suite dials
)

// TestBsmRedislockSuite runs bsm/redislock's tests through the proxy.
func TestBsmRedislockSuite(t *testing.T) {
	if os.Getenv(bsmSuiteEnv) != "1" {
		t.Skip("needs 127.0.0.1:6379; .ci/run sets " + bsmSuiteEnv + "=1")
	}
	ln, err := net.Listen("tcp", bsmSuiteAddr)
	if err != nil {
		// Not ours to stop (a distro redis-server service, another run):
		// say what holds it.
		holder, _ := exec.Command("ss", "-ltnp", "sport = :6379").CombinedOutput()
		t.Fatalf("bsm/redislock's suite dials %s, which is taken (%v); stop what listens there and rerun:\n%s", bsmSuiteAddr, err, holder)
	}
	_ = ln.Close()
	harness.New(t, 3, func(c *config.Config) {
		c.Listen = bsmSuiteAddr
		c.MaxTTL = 2 * time.Hour // the suite's locks last an hour
	})

	dir := bsmSuiteCopy(t)
	cmd := exec.Command("go", "test", "-json", "-count=1", "-timeout=90s", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local")
	out, _ := cmd.Output() // a failing test exits 1; the events say which
	got := bsmSuiteOutcomes(t, out)
	want := bsmSuiteExpectations(t)

	var names []string
	for n := range got {
		names = append(names, n)
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	passed := 0
	for _, n := range names {
		g, w := got[n], want[n]
		switch {
		case g == "pass":
			passed++
		}
		switch {
		case w == "":
			t.Errorf("%s: %s, and not in %s: add it (pass, or fail with the reason)", n, g, bsmSuiteExpected)
		case g == "":
			t.Errorf("%s: expected (%s) but did not run", n, w)
		case g == "pass" && w != "pass":
			t.Errorf("%s passes now, expected to fail (%s): a surprise pass; update %s", n, w, bsmSuiteExpected)
		case g != "pass" && w == "pass":
			t.Errorf("REGRESSION: %s %s through the proxy, expected to pass", n, g)
		}
	}
	t.Logf("bsm/redislock suite through the proxy: %d of %d tests pass", passed, len(got))
	if t.Failed() {
		t.Logf("go test output:\n%s", bsmSuiteText(out))
	}
}

// bsmSuiteCopy copies the module's files from the (read-only) module
// cache to a writable temporary directory.
func bsmSuiteCopy(t *testing.T) string {
	t.Helper()
	src, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", bsmSuiteModule).Output()
	if err != nil || len(strings.TrimSpace(string(src))) == 0 {
		if dl, err2 := exec.Command("go", "mod", "download", "-json", bsmSuiteModule).Output(); err2 == nil {
			var m struct{ Dir string }
			if json.Unmarshal(dl, &m) == nil {
				src = []byte(m.Dir)
			}
		}
	}
	from := strings.TrimSpace(string(src))
	if from == "" {
		t.Fatalf("%s is not in the module cache: go mod download %s (%v)", bsmSuiteModule, bsmSuiteModule, err)
	}
	dst := t.TempDir()
	err = filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", from, err)
	}
	return dst
}

// bsmSuiteOutcomes reads go test -json: each top-level test's (and
// example's) pass, fail or skip.
func bsmSuiteOutcomes(t *testing.T, out []byte) map[string]string {
	t.Helper()
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct{ Action, Test string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test == "" || strings.Contains(ev.Test, "/") {
			continue
		}
		switch ev.Action {
		case "pass", "fail", "skip":
			got[ev.Test] = ev.Action
		}
	}
	if len(got) == 0 {
		t.Fatalf("go test of %s ran no test:\n%s", bsmSuiteModule, bsmSuiteText(out))
	}
	return got
}

// bsmSuiteExpectations reads the committed list: "pass Name" or
// "fail Name reason...". Blank lines and # comments are skipped.
func bsmSuiteExpectations(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(bsmSuiteExpected)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		switch {
		case f[0] == "pass" && len(f) == 2:
			want[f[1]] = "pass"
		case f[0] == "fail" && len(f) > 2:
			want[f[1]] = "fail: " + strings.Join(f[2:], " ")
		default:
			t.Fatalf("%s:%d: want \"pass Name\" or \"fail Name reason\": %q", bsmSuiteExpected, i+1, line)
		}
	}
	return want
}

// bsmSuiteText is go test -json's output as the text go test prints.
func bsmSuiteText(out []byte) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct{ Output string }
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			b.WriteString(ev.Output)
		} else {
			fmt.Fprintln(&b, sc.Text())
		}
	}
	return b.String()
}
