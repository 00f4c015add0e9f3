package statuspage

import (
	"fmt"
	"testing"
)

// Contention keeps at most its capacity of keys, and a key that keeps
// being contended stays at the top however many one-off keys pass through.
func TestContentionIsBoundedAndKeepsTheHotKey(t *testing.T) {
	c := NewContention(8)
	for i := range 1000 {
		c.Add("hot")
		c.Add(fmt.Sprintf("cold-%d", i))
	}
	if n := len(c.counts); n > 8 {
		t.Fatalf("tracks %d keys; capacity 8", n)
	}
	top := c.Top(3)
	if len(top) != 3 || top[0].Key != "hot" || top[0].Count < 1000 {
		t.Fatalf("Top(3) = %v; want hot first with >= 1000", top)
	}
	if got := (*Contention)(nil).Top(5); got != nil {
		t.Fatalf("nil Contention's Top = %v", got)
	}
}
