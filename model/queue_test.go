package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// queueBound is the bound every queue.pml run shares (README.md): 3 ticks,
// a lease of 1 tick, at most 2 fair acquire rounds per waiter.
var queueBound = []string{"-DMAXT=3", "-DLEASE=1", "-DMAXTRY=2"}

// queueConfigs are queue.pml's runs: the fair waiting queue.
var queueConfigs = []config{
	{"queue_base", "queue.pml", append([]string{"-DMAXF=1"}, queueBound...), false, nil},
	{"queue_restart", "queue.pml", append([]string{"-DWITH_RESTART", "-DMAXF=0"}, queueBound...), false, nil},
	{"mutant_ignore_head", "queue.pml", append([]string{"-DMAXF=1", "-DMUTANT_IGNORE_HEAD"}, queueBound...), true, nil},
	{"mutant_purge_by_ticket", "queue.pml", append([]string{"-DMAXF=0", "-DMUTANT_PURGE_BY_TICKET"}, queueBound...), true, nil},
}

// TestQueue runs queueConfigs as TestModel runs configs, two at a time.
func TestQueue(t *testing.T) {
	tools(t)
	for _, c := range queueConfigs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src, err := filepath.Abs(c.file)
			if err != nil {
				t.Fatal(err)
			}
			run(t, dir, "spin", append(append([]string{"-a"}, c.flags...), src)...)
			run(t, dir, "gcc", "-O2", "-w", "-DSAFETY", "-DCOLLAPSE", "-o", "pan", "pan.c")
			out := run(t, dir, "./pan", "-m100000", "-c1")
			m := errorsRe.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("pan printed no error count:\n%s", out)
			}
			states, depth := find(statesRe, out), find(depthRe, out)
			switch {
			case c.mutant && m[1] == "0":
				t.Fatalf("mutant %v not caught: 0 errors in %s states", c.flags, states)
			case c.mutant:
				trail, _ := os.ReadFile(filepath.Join(dir, c.file+".trail"))
				t.Logf("mutant caught: %s error(s), trail of %d steps, %s states", m[1], strings.Count(string(trail), "\n"), states)
			case m[1] != "0":
				t.Fatalf("%s error(s) in the unmutated model %v:\n%s", m[1], c.flags, out)
			case strings.Contains(out, "max search depth too small"):
				t.Fatalf("search truncated (depth %s): raise -m", depth)
			default:
				t.Logf("verified, exhaustive: 0 errors, %s states, depth %s", states, depth)
			}
		})
	}
}
