package history

import (
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

// op builds an op on key "k": invoke and return in ms.
func op(owner string, kind Kind, inv, ret int, out Outcome, ttl int, token int64) Op {
	return Op{Client: owner, Key: "k", Kind: kind, Owner: owner, TTL: time.Duration(ttl) * ms,
		Invoke: time.Duration(inv) * ms, Return: time.Duration(ret) * ms, Outcome: out, Token: token}
}

func kinds(r Result) string {
	var ks []string
	for _, a := range r.Anomalies {
		ks = append(ks, a.Kind)
	}
	return strings.Join(ks, ",")
}

// TestAnomaliesCaught: each class of anomaly, alone in a short history, is
// reported with its kind, and nothing else is.
func TestAnomaliesCaught(t *testing.T) {
	delayed := op("A", Acquire, 0, 10, OK, 100, 1)
	delayed.Delay = 500 * ms
	for _, c := range []struct {
		name, want string
		ops        []Op
	}{
		{"overlap", "overlap", []Op{op("A", Acquire, 0, 10, OK, 1000, 0), op("B", Acquire, 500, 520, OK, 1000, 0)}},
		{"overlap after an extend", "overlap", []Op{op("A", Acquire, 0, 10, OK, 100, 0),
			op("A", Extend, 50, 60, OK, 1000, 0), op("B", Acquire, 500, 520, OK, 1000, 0)}},
		{"token going backwards", "token-backwards", []Op{op("A", Acquire, 0, 10, OK, 100, 7),
			op("B", Acquire, 200, 210, OK, 100, 7)}},
		{"token read going backwards", "token-backwards", []Op{op("A", Acquire, 0, 10, OK, 100, 0), op("A", Token, 20, 25, OK, 0, 9),
			op("B", Acquire, 200, 210, OK, 100, 0), op("B", Token, 220, 230, OK, 0, 3)}},
		{"two tokens for one hold", "two-tokens", []Op{op("A", Acquire, 0, 10, OK, 1000, 0),
			op("A", Token, 20, 30, OK, 0, 1), op("A", Token, 40, 50, OK, 0, 2)}},
		{"token read disagreeing with the grant", "two-tokens", []Op{op("A", Acquire, 0, 10, OK, 1000, 4), op("A", Token, 20, 30, OK, 0, 5)}},
		{"lock-delay violated", "lock-delay", []Op{delayed, op("B", Acquire, 150, 200, OK, 100, 2)}},
		{"extend by a non-owner accepted", "extend-not-owner", []Op{op("A", Acquire, 0, 10, OK, 1000, 0),
			op("B", Extend, 100, 110, OK, 1000, 0)}},
		{"extend by one that never asked", "extend-never-granted", []Op{op("B", Extend, 100, 110, OK, 1000, 0)}},
		{"extend after a release", "extend-after-release", []Op{op("A", Acquire, 0, 10, OK, 1000, 0),
			op("A", Release, 20, 30, OK, 0, 0), op("A", Extend, 40, 50, OK, 1000, 0)}},
		{"release after expiry accepted", "release-not-owner", []Op{op("A", Acquire, 0, 10, OK, 100, 0),
			op("B", Acquire, 150, 160, OK, 1000, 0), op("A", Release, 300, 310, OK, 0, 0)}},
		{"release one step inside another's window", "release-not-owner", []Op{op("A", Acquire, 0, 10, OK, 20, 0),
			op("B", Acquire, 25, 30, OK, 1000, 0), op("A", Release, 31, 32, OK, 0, 0)}},
		{"holder told not held", "release-refused-holder", []Op{op("A", Acquire, 0, 10, OK, 1000, 0), op("A", Release, 20, 30, NotHeld, 0, 0)}},
		{"late OK", "late", []Op{op("A", Acquire, 0, 150, OK, 100, 0)}},
		{"token read for another's lock", "token-not-owner", []Op{op("A", Acquire, 0, 10, OK, 1000, 3), op("B", Acquire, 5, 12, Unknown, 1000, 0),
			op("B", Token, 20, 30, OK, 0, 3)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Check(c.ops, Options{})
			if got := kinds(r); got != c.want {
				t.Fatalf("anomalies %q, want %q: %v", got, c.want, r.Anomalies)
			}
		})
	}
}

// TestTightButLegal: histories at the edges of the contract pass.
func TestTightButLegal(t *testing.T) {
	delayed := op("A", Acquire, 0, 10, OK, 100, 1)
	delayed.Delay = 500 * ms
	for _, c := range []struct {
		name string
		ops  []Op
	}{
		{"next grant returns exactly at the window's end", []Op{op("A", Acquire, 0, 10, OK, 100, 1), op("B", Acquire, 50, 100, OK, 100, 2)}},
		{"release ends the hold at its send", []Op{op("A", Acquire, 0, 10, OK, 1000, 1), op("A", Release, 50, 400, OK, 0, 0),
			op("B", Acquire, 60, 70, OK, 100, 2)}},
		{"unknown release may have taken effect", []Op{op("A", Acquire, 0, 10, OK, 1000, 1), op("A", Release, 50, 60, Unknown, 0, 0),
			op("B", Acquire, 70, 80, OK, 100, 2)}},
		{"unknown acquire may have taken effect", []Op{op("A", Acquire, 0, 10, Unknown, 1000, 0), op("A", Extend, 20, 30, OK, 1000, 0),
			op("A", Token, 40, 50, OK, 0, 5)}},
		{"unknown acquire may not have", []Op{op("A", Acquire, 0, 10, Unknown, 1000, 0), op("B", Acquire, 20, 30, OK, 1000, 1)}},
		{"a released lock owes no delay", []Op{delayed, op("A", Release, 50, 60, OK, 0, 0), op("B", Acquire, 70, 80, OK, 100, 2)}},
		{"grant after the delay", []Op{delayed, op("B", Acquire, 500, 600, OK, 1000, 2)}},
		{"concurrent grants may order tokens either way", []Op{op("A", Acquire, 0, 100, OK, 110, 2), op("B", Acquire, 50, 150, Unknown, 10, 0),
			op("C", Acquire, 90, 200, OK, 1000, 1)}},
		{"extend shortening the lock", []Op{op("A", Acquire, 0, 10, OK, 1000, 1), op("A", Extend, 20, 30, OK, 50, 0),
			op("B", Acquire, 75, 80, OK, 100, 2)}},
		{"release OK just after the window (padding)", []Op{op("A", Acquire, 0, 10, OK, 100, 1), op("A", Release, 101, 110, OK, 0, 0)}},
		{"release sent the instant another's grant returned (FuzzCheck acfae37e81b52fb1)", []Op{op("A", Acquire, 0, 10, OK, 1000, 1),
			op("B", Acquire, 20, 30, Unknown, 1000, 0), op("A", Release, 30, 31, OK, 0, 0), op("C", Acquire, 25, 30, OK, 100, 2)}},
		{"release answered the instant another's window ended", []Op{op("A", Acquire, 0, 10, OK, 20, 1),
			op("B", Acquire, 25, 30, OK, 100, 2), op("A", Release, 40, 125, OK, 0, 0)}},
		{"not held after expiry", []Op{op("A", Acquire, 0, 10, OK, 100, 1), op("A", Token, 95, 110, NotHeld, 0, 0)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := Check(c.ops, Options{}); !r.OK() {
				t.Fatalf("false alarm: %v", r.Anomalies)
			}
		})
	}
}

// TestSharedHolds: a read-write lock's readers (Shared) may hold it at
// once, and extend and release inside each other's windows; a writer
// beside a reader, before or after it, is an overlap; a reader granted
// inside a writer's lock-delay is one too, a reader inside a reader's not.
func TestSharedHolds(t *testing.T) {
	read := func(owner string, inv, ret, ttl int) Op {
		o := op(owner, Acquire, inv, ret, OK, ttl, 0)
		o.Shared = true
		return o
	}
	delayed := func(o Op) Op { o.Delay = 500 * ms; return o }
	for _, c := range []struct {
		name, want string
		ops        []Op
	}{
		{"readers share", "", []Op{read("A", 0, 10, 1000), read("B", 100, 110, 1000), op("B", Extend, 200, 210, OK, 1000, 0),
			op("B", Release, 300, 310, OK, 0, 0), read("C", 400, 410, 1000)}},
		{"a writer beside a reader", "overlap", []Op{read("A", 0, 10, 1000), op("W", Acquire, 500, 520, OK, 1000, 0)}},
		{"a reader beside a writer", "overlap", []Op{op("W", Acquire, 0, 10, OK, 1000, 0), read("A", 500, 520, 1000)}},
		{"a reader between two readers and a writer", "overlap", []Op{read("A", 0, 10, 5000), read("B", 20, 30, 100),
			op("W", Acquire, 200, 210, OK, 100, 0)}},
		{"a reader inside a writer's lock-delay", "lock-delay", []Op{delayed(op("W", Acquire, 0, 10, OK, 100, 0)), read("A", 150, 200, 100)}},
		{"a writer inside a reader's lock-delay", "lock-delay", []Op{delayed(read("A", 0, 10, 100)), op("W", Acquire, 150, 200, OK, 100, 0)}},
		{"a reader inside a reader's lock-delay", "", []Op{delayed(read("A", 0, 10, 100)), read("B", 150, 200, 100)}},
	} {
		if got := kinds(Check(c.ops, Options{})); got != c.want {
			t.Errorf("%s: anomalies %q; want %q", c.name, got, c.want)
		}
	}
}
