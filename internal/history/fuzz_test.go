package history

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestLongLegalHistory: thousands of ops on a few keys, with Unknown
// outcomes and timings at the edges of the windows, raise no alarm, and
// survive a round trip through Write and Read.
func TestLongLegalHistory(t *testing.T) {
	ops := simulate(rand.New(rand.NewPCG(1, 2)), 20000, 3, 6)
	var counts = map[Outcome]int{}
	for _, op := range ops {
		counts[op.Outcome]++
	}
	if counts[Unknown] < 1000 || counts[OK] < 3000 || counts[NotHeld] < 1000 || counts[Taken] < 1000 {
		t.Fatalf("the simulation does not cover the outcomes: %v", counts)
	}
	var buf bytes.Buffer
	if err := Write(&buf, ops); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&buf)
	if err != nil || len(back) != len(ops) {
		t.Fatalf("read back %d of %d: %v", len(back), len(ops), err)
	}
	r := Check(back, Options{})
	if !r.OK() {
		t.Fatalf("%s: %v", r.Verdict(), r.Anomalies[:min(5, len(r.Anomalies))])
	}
	t.Logf("%s; outcomes %v", r.Verdict(), counts)
}

// TestSimulatedBugsCaught: the same histories with one grant's owner
// forged, or one token lowered, fail: the legal corpus is not vacuous.
func TestSimulatedBugsCaught(t *testing.T) {
	ops := simulate(rand.New(rand.NewPCG(3, 4)), 3000, 1, 4)
	caught := 0
	for i, op := range ops {
		if op.Kind != Acquire || op.Outcome != Taken || caught >= 20 {
			continue
		}
		bad := append([]Op(nil), ops...)
		bad[i].Outcome = OK // a grant while another held it
		if !Check(bad, Options{}).OK() {
			caught++
		}
	}
	if caught < 10 {
		t.Fatalf("only %d of the forged grants over a taken lock caught", caught)
	}
}

// FuzzCheck: Check never panics, and legal-by-construction histories pass.
func FuzzCheck(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint16(300), uint8(2), uint8(3), []byte{})
	f.Add(uint64(7), uint64(9), uint16(50), uint8(1), uint8(2), []byte{3, 1, 4, 1, 5})
	f.Fuzz(func(t *testing.T, s1, s2 uint64, n uint16, keys, clients uint8, mangle []byte) {
		rng := rand.New(rand.NewPCG(s1, s2))
		ops := simulate(rng, int(n%2000), 1+int(keys%4), 1+int(clients%8))
		if r := Check(ops, Options{}); !r.OK() {
			t.Fatalf("legal history: %v", r.Anomalies)
		}
		// Mangled histories: any outcome, times, tokens; only no panic.
		for i, b := range mangle {
			if len(ops) == 0 {
				break
			}
			o := &ops[(i*7+int(b))%len(ops)]
			switch b % 5 {
			case 0:
				o.Outcome = []Outcome{OK, Taken, NotHeld, Unknown, "bogus"}[int(b)/5%5]
			case 1:
				o.Return, o.Invoke = o.Invoke, o.Return
			case 2:
				o.Token = -int64(b)
			case 3:
				o.TTL = -time.Duration(b)
			case 4:
				o.Kind = []Kind{Acquire, Release, Extend, Token, "x"}[int(b)/5%5]
			}
		}
		_ = Check(ops, Options{AllowLate: b2(mangle)}).Verdict()
	})
}

func b2(b []byte) bool { return len(b)%2 == 1 }
