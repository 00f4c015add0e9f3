package statuspage

import (
	"sync"

	"github.com/redlock-proxy/redlock-proxy/proxy"
)

// Contention counts, per key, the acquire rounds that found the lock taken
// (quorum.WithContention), in bounded memory: when it tracks its capacity
// of keys already, a new key replaces the least counted one and inherits
// its count (the space-saving algorithm), so a key that is truly hot stays
// and a count can only overestimate, by at most the count it replaced.
type Contention struct {
	mu     sync.Mutex
	counts map[string]int64
	max    int
}

// NewContention tracks up to capacity keys.
func NewContention(capacity int) *Contention {
	return &Contention{counts: make(map[string]int64, capacity), max: max(capacity, 1)}
}

// Add counts one contended round of key.
func (c *Contention) Add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.counts[key]; !ok && len(c.counts) >= c.max {
		minKey, minN := "", int64(-1)
		for k, n := range c.counts {
			if minN < 0 || n < minN {
				minKey, minN = k, n
			}
		}
		delete(c.counts, minKey)
		c.counts[key] = minN
	}
	c.counts[key]++
}

// Top returns the n most contended keys, most first.
func (c *Contention) Top(n int) []proxy.KeyCount {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	out := make([]proxy.KeyCount, 0, len(c.counts))
	for k, v := range c.counts {
		out = append(out, proxy.KeyCount{Key: k, Count: v})
	}
	c.mu.Unlock()
	proxy.SortCounts(out)
	return out[:min(n, len(out))]
}
