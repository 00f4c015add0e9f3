package quorum

import (
	"testing"
	"time"
)

// A round's node j is the engine's node idx[j]: a fenced grant whose round
// went to nodes 1-3 counts their intact counters, not those of nodes 0-2.
func TestFenceMapsRoundPositionsToNodes(t *testing.T) {
	fs, ns := fakes(5)
	e := newEngine(t, ns)
	waitFor(t, "every node intact", func() bool {
		for _, h := range e.health {
			if !h.isIntact() {
				return false
			}
		}
		return true
	})
	for _, i := range []int{0, 4} { // not in the round, and not intact
		h := e.health[i]
		h.mu.Lock()
		h.intact = false
		h.mu.Unlock()
		fs[i].setOpFault("raise", errRefused, nil) // the raise, to every node, then counts nodes 1-3 too
	}
	idx := []int{1, 2, 3}
	r := &timedRound{round: &round{idx: idx, nodes: e.nodes, health: e.health, votes: []vote{yes, yes, yes},
		replies: []Reply{{Token: 4}, {Token: 7}, {Token: 5}}, errs: make([]error, 3), wasIntact: []bool{true, true, true}, quorum: e.quorum},
		ttl: 10 * time.Second, start: time.Now()}
	g, rerr := e.fence(r, "tok", Grant{}, Op{})
	if rerr != nil || g.Token != 7 {
		t.Fatalf("fence of a grant by intact nodes 1-3 = %+v, %v; want token 7", g, rerr)
	}
}
