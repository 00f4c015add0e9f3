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
