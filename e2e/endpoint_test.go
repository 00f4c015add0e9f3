package e2e

// The endpoint as a newcomer meets it: redis-cli, and the embedded mode.

import (
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestRedisCLI(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Fatal("redis-cli not found on PATH: install redis-tools (.ci/run does this)")
	}
	h := harness.New(t, 5, nil)
	host, port, _ := net.SplitHostPort(h.Addr)
	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("redis-cli", append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %q: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := cli("SET", "lock:a", "tok", "NX", "PX", "30000"); got != "OK" {
		t.Fatalf("redis-cli acquire: %q", got)
	}
	if got := cli("SET", "lock:a", "other", "NX", "PX", "30000"); got != "" {
		t.Fatalf("redis-cli second owner: %q; want nil (empty)", got)
	}
	if got := cli("EVAL", harness.UnlockScript, "1", "lock:a", "tok"); got != "1" {
		t.Fatalf("redis-cli unlock: %q", got)
	}
	if got := cli("PING"); got != "PONG" {
		t.Fatalf("redis-cli PING: %q", got)
	}
	if got := cli("INFO", "replication"); !strings.Contains(got, "role:master") {
		t.Fatalf("redis-cli INFO replication: %q", got)
	}
	// redis-cli -3 speaks RESP3 (HELLO 3 first).
	if got := cli("-3", "SET", "lock:r3", "tok", "NX", "PX", "30000"); got != "OK" {
		t.Fatalf("redis-cli -3 acquire: %q", got)
	}
	if got := cli("-3", "SET", "lock:r3", "other", "NX", "PX", "30000"); got != "" {
		t.Fatalf("redis-cli -3 second owner: %q", got)
	}
	if got := cli("-3", "CLIENT", "INFO"); !strings.Contains(got, "resp=3") {
		t.Fatalf("redis-cli -3 did not get RESP3: %q", got)
	}
}

// TestEmbeddedMode is the README's first command: no backends configured.
func TestEmbeddedMode(t *testing.T) {
	h := harness.New(t, 0, nil)
	c, ctx := h.Client(), t.Context()
	if got := h.App.Engine.Nodes(); got != 5 {
		t.Fatalf("embedded backends = %d, want 5", got)
	}
	if ok, err := c.SetNX(ctx, "lock:a", "tok", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("acquire = %v, %v", ok, err)
	}
	if ok, err := c.SetNX(ctx, "lock:a", "other", 30*time.Second).Result(); ok || err != nil {
		t.Fatalf("second owner = %v, %v", ok, err)
	}
	if v, err := c.Eval(ctx, harness.UnlockScript, []string{"lock:a"}, "tok").Int(); v != 1 || err != nil {
		t.Fatalf("unlock = %d, %v", v, err)
	}
}
