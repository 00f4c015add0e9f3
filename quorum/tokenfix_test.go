package quorum

import (
	"context"
	"testing"
	"time"
)

// fixOn fixes token beside key's lock on fs as another reader's OpFixToken
// would have: set if absent.
func fixOn(t *testing.T, fs []*fakeNode, key string, token int64) {
	t.Helper()
	for _, f := range fs {
		f.mu.Lock()
		l := f.data[key]
		if l.note == NoteNone {
			l.token, l.note = token, NoteFixed
			f.data[key] = l
		}
		f.mu.Unlock()
	}
}

// Two readers fixed a plain lock's first token at once: one on nodes 0
// and 1, the other on 2, 3 and 4. Only the second has Q holders; a reader
// answers it, whichever token it drew, and never its own. With node 4
// down and the split 2:2, no token has Q holders: refused, not guessed.
func TestFirstTokenSplitAnswersTheQuorumsToken(t *testing.T) {
	fs, ns := fakes(5)
	e := newEngine(t, ns)
	ctx := context.Background()
	if _, err := e.Acquire(ctx, "split", "x", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lock on every node", func() bool { return holders(fs, "split", "x") == 5 })
	fixOn(t, fs[:2], "split", 900) // above every counter: a fresh draw is smaller
	fixOn(t, fs[2:], "split", 7)
	for range 3 {
		if en, err := e.TokenOf(ctx, "split"); err != nil || en.Token != 7 {
			t.Fatalf("TokenOf = %+v, %v; want the token Q holders fixed, 7", en, err)
		}
	}

	if _, err := e.Acquire(ctx, "split2", "x", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lock on every node", func() bool { return holders(fs, "split2", "x") == 5 })
	fixOn(t, fs[:2], "split2", 900)
	fixOn(t, fs[2:4], "split2", 8)
	fs[4].setFault(errRefused, 0, nil)
	if en, err := e.TokenOf(ctx, "split2"); err == nil || en.Token != 0 {
		t.Fatalf("TokenOf of a 2:2 split with a node down = %+v, %v; want a refusal", en, err)
	}
	fs[4].setFault(nil, 0, nil)
	en, err := e.TokenOf(ctx, "split2") // node 4 back: the first fix there decides
	if err != nil || en.Token != 900 && en.Token != 8 {
		t.Fatalf("TokenOf = %+v, %v; want 900 or 8", en, err)
	}
	if again, err := e.TokenOf(ctx, "split2"); err != nil || again.Token != en.Token {
		t.Fatalf("second read = %+v, %v; want %d", again, err, en.Token)
	}
}
