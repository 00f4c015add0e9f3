package quorum

import (
	"context"
	"sync"
	"testing"
	"time"
)

// lateFixNode answers the first token-fix round (OpFixToken with N 0) at
// answerAt, having applied it at once.
type lateFixNode struct {
	*fakeNode
	answerAt time.Time
	wg       *sync.WaitGroup
}

func (n *lateFixNode) Do(op Op, deadline time.Time, done Done) {
	if op.Kind != OpFixToken || op.N != 0 {
		n.fakeNode.Do(op, deadline, done)
		return
	}
	r := n.fakeNode.apply(op, time.Now().Add(time.Hour))
	n.wg.Go(func() {
		time.Sleep(time.Until(n.answerAt))
		done.Done(r)
	})
}

// TokenOf of a lock whose first token-fix round is decided only after the
// lock's window ended, one node still out: the round was described
// (validity spent) after finish had handed it to the goroutine that adds
// the straggler's answer, a data race on its per-node arrays under -race
// (found by helper-92; older than the change it reviewed). It is described
// first now, and says how long the fix took, never a negative time.
func TestTokenFixSpentIsDescribedBeforeItsRoundIsHandedOn(t *testing.T) {
	fs, _ := fakes(3)
	var wg sync.WaitGroup
	defer wg.Wait()
	ns := make([]Node, 3)
	ls := make([]*lateFixNode, 3)
	for i, f := range fs {
		ls[i] = &lateFixNode{fakeNode: f, wg: &wg}
		ns[i] = ls[i]
	}
	e := newEngine(t, ns)
	acquired := time.Now()
	if _, err := e.Acquire(context.Background(), "fx", "x", 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lock on every node", func() bool { return holders(fs, "fx", "x") == 3 })
	ls[0].answerAt = acquired.Add(450 * time.Millisecond)
	ls[1].answerAt = acquired.Add(450 * time.Millisecond)
	ls[2].answerAt = acquired.Add(700 * time.Millisecond)
	_, err := e.TokenOf(context.Background(), "fx")
	if rerr, ok := err.(*RoundError); ok && rerr.Spent < 0 {
		t.Errorf("TokenOf's error says the fix took %v", rerr.Spent)
	}
	if err == nil {
		t.Log("the fix was not spent: the window of the race was not reached")
	}
}
