package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestRedisCLIInteractive drives redis-cli's interactive mode in a real
// terminal (tmux): on start it asks COMMAND DOCS for its hints, its line
// editor queries the terminal, and each typed command's reply is printed.
func TestRedisCLIInteractive(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed to give redis-cli a terminal; .ci/run installs it")
	}
	h := harness.New(t, 3, nil)
	host, port, _ := strings.Cut(h.Addr, ":")
	session := fmt.Sprintf("redlock-cli-%d", time.Now().UnixNano())
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50", "redis-cli", "-h", host, "-p", port)
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", session).Run() })
	screen := func() string { return tmux("capture-pane", "-p", "-t", session) }
	waitScreen := func(what string, cond func(string) bool) string {
		t.Helper()
		var s string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if s = screen(); cond(s) {
				return s
			}
		}
		t.Fatalf("%s; the screen:\n%s", what, s)
		return ""
	}
	prompt := h.Addr + ">"
	waitScreen("no prompt", func(s string) bool { return strings.Contains(s, prompt) })
	typeLine := func(line string) {
		tmux("send-keys", "-t", session, "-l", line)
		tmux("send-keys", "-t", session, "Enter")
	}
	typeLine("SET cli:lock tok NX PX 30000")
	waitScreen("no OK for the lock", func(s string) bool { return strings.Contains(s, "OK") })
	typeLine("SET cli:lock other NX PX 30000")
	waitScreen("no nil for the contender", func(s string) bool { return strings.Contains(s, "(nil)") })
	typeLine(`EVAL "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end" 1 cli:lock tok`)
	waitScreen("no release", func(s string) bool { return strings.Contains(s, "(integer) 1") })
	typeLine("COMMAND COUNT")
	s := waitScreen("no COMMAND COUNT", func(s string) bool { return strings.Count(s, "(integer)") >= 2 })
	if h.Holders("cli:lock", "tok") != 0 {
		t.Fatalf("the lock is still on a backend after the release:\n%s", s)
	}
	if strings.Contains(s, "ERR") {
		t.Fatalf("an error on the screen:\n%s", s)
	}
	t.Logf("the terminal:\n%s", strings.TrimSpace(s))
}
