package history

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkCheck: a 100,000-op legal history on 4 keys (a nemesis soak's
// size).
func BenchmarkCheck(b *testing.B) {
	ops := simulate(rand.New(rand.NewPCG(5, 6)), 100000, 4, 16)
	b.ResetTimer()
	for range b.N {
		if r := Check(ops, Options{}); !r.OK() {
			b.Fatal(r.Verdict())
		}
	}
}
