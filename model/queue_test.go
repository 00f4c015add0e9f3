package model

import (
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
			check(t, c)
		})
	}
}
