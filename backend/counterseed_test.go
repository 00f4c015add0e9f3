package backend

import (
	"fmt"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// A lock's own fencing counter (quorum.LockCounterKey) that a node lacks
// starts from the node's shared counter; a key of the client's name (an
// earlier version's counter there, listed, or a value a client wrote) is
// neither read nor written.
func TestLockCounterStart(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	n, c := newNode(t, s), s.Client()
	ctx := t.Context()
	cases := []struct {
		what, shared, old string
		listed            bool
		want              int64
	}{
		{"from the shared counter", "1000", "", false, 1001},
		{"a listed earlier counter of the client's name is no floor", "1000", "5000", true, 1001},
		{"nor a key a client wrote there", "1000", "5000", false, 1001},
		{"a shared counter that holds no count", "abc", "", false, 1},
		{"no shared counter", "", "", false, 1},
	}
	for i, tc := range cases {
		name := fmt.Sprint("redisson_lock_token:{c", i, "}")
		if err := c.Del(ctx, quorum.TokenKey).Err(); err != nil {
			t.Fatal(err)
		}
		if tc.shared != "" {
			c.Set(ctx, quorum.TokenKey, tc.shared, 0)
		}
		if tc.old != "" {
			c.Set(ctx, name, tc.old, 0)
		}
		if tc.listed {
			c.SAdd(ctx, quorum.CountersKey, name)
		}
		lock := fmt.Sprint("{c", i, "}")
		r := do(t, n, quorum.Op{Kind: quorum.OpHashAcquire, Key: lock, Value: "o:1", TTL: time.Minute, Round: "r", Aux: quorum.LockCounterKey(name)})
		if !r.OK || r.Token != tc.want {
			t.Errorf("%s: grant %+v; want token %d", tc.what, r, tc.want)
		}
		if v, _ := c.Get(ctx, name).Result(); v != tc.old {
			t.Errorf("%s: the client's key now holds %q; want %q", tc.what, v, tc.old)
		}
	}
}

// A marking with a floor (quorum's markSeeded, Bootstrap) raises the
// shared counter and every lock counter the backend lists, one a try made
// after the engine read the counters included, and nothing else listed.
func TestMarkingRaisesEveryLockCounter(t *testing.T) {
	s := redistest.Start(t, 2)
	ctx := t.Context()
	lock, old := quorum.LockCounterKey("redisson_lock_token:{m}"), "redisson_lock_token:{m}"
	for _, srv := range s {
		c := srv.Client()
		c.Set(ctx, lock, "1", 0) // a try's, made from a lost shared counter
		c.Set(ctx, old, "2", 0)  // an earlier version's, under the client's name
		c.SAdd(ctx, quorum.CountersKey, lock, old)
	}
	const floor = 1795463020015000
	repaired, fresh := newNode(t, s[0]), newNode(t, s[1])
	info, err := repaired.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := repaired.Repair(ctx, quorum.NewMarker(info.RunID), "", map[string]int64{}, floor); err != nil {
		t.Fatal(err)
	}
	if err := fresh.MarkNew(ctx, "run", floor); err != nil {
		t.Fatal(err)
	}
	for i, srv := range s {
		c := srv.Client()
		for key, want := range map[string]string{quorum.TokenKey: "1795463020015000", lock: "1795463020015000", old: "2"} {
			if got := c.Get(ctx, key).Val(); got != want {
				t.Errorf("backend %d: %s = %q; want %q", i, key, got, want)
			}
		}
	}
}
