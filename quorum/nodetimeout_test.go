package quorum

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A node that timed out is ErrNodeTimeout in a round's error, not the
// caller's context.DeadlineExceeded: the caller's ctx did not expire.
func TestNodeTimeoutIsNotTheCallersDeadline(t *testing.T) {
	fs, ns := fakes(3)
	e := newEngine(t, ns, WithNodeTimeout(50*time.Millisecond))
	for _, f := range fs[1:] {
		f.setFault(nil, time.Second, nil)
	}
	_, err := e.Acquire(context.Background(), "k", "v", 10*time.Second)
	if !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrNodeTimeout) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with two of three nodes timing out = %v; want ErrNoQuorum and ErrNodeTimeout, not context.DeadlineExceeded", err)
	}
	if want := "node1: timeout, and its rollback failed (timeout)"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q; want it to say %q", err, want)
	}
}
