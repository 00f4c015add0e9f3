package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRedisPyLock runs redis-py's redis.lock.Lock (Debian python3-redis,
// /usr/bin/python3) against the proxy over five real redis-servers.
func TestRedisPyLock(t *testing.T) {
	if out, err := exec.Command("/usr/bin/python3", "-c", "import redis").CombinedOutput(); err != nil {
		t.Fatalf("Debian's python3-redis is needed (apt-get install python3-redis; .ci/run does this): %v: %s", err, out)
	}
	h := newHarness(t, 5, nil)
	cmd := exec.Command("/usr/bin/python3", "compat/python/redispy_lock.py")
	cmd.Env = append(cmd.Environ(), "REDLOCK_ADDR="+h.addr)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil || !strings.Contains(string(out), "passed") {
		t.Fatalf("redis-py's Lock against the proxy: %v", err)
	}
}
