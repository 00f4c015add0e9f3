package e2e

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestReview114CounterGetInDatabase: Redisson's RFencedLock.getToken() is
// GET redisson_lock_token:{name}. In database 0 the proxy answers it from
// the lock's counter (ReadCounter, LockCounterKey); in databases 1-15 the
// key is mapped (__redlock:db3:...) before cmdGet looks for the
// "redisson_lock_token:" prefix, so the GET is a plain read of the
// client-named key, which since 90d21e0 is no longer the counter: it reads
// nil after a grant, and any client of that database can write the key
// (a plain SET NX lock) and make GET answer a value below the token.
func TestReview114CounterGetInDatabase(t *testing.T) {
	h := harness.New(t, 3, nil)
	ctx := t.Context()
	for _, db := range []int{0, 3} {
		c := h.Client(func(o *redis.Options) { o.DB = db })
		const name, counter = "{gdb}", "redisson_lock_token:{gdb}"
		v, err := c.EvalSha(ctx, shaRFencedTry, []string{name, counter}, 10000, "u1:1").Result()
		pair, _ := v.([]any)
		if err != nil || len(pair) != 2 || pair[0] != int64(-1) {
			t.Fatalf("db %d: fenced tryLock = %v, %v", db, v, err)
		}
		tok := pair[1].(int64)
		got, gerr := c.Get(ctx, counter).Result()
		t.Logf("db %d: token %d; GET %s = %q, %v", db, tok, counter, got, gerr)
		if gerr != nil || got != strconv.FormatInt(tok, 10) {
			t.Errorf("db %d: GET %s (Redisson's getToken) = %q, %v; want the token just given, %d", db, counter, got, gerr, tok)
		}
		// Any client of the database writes the key the GET now reads.
		if db != 0 {
			if err := c.SetArgs(ctx, counter, "1", redis.SetArgs{Mode: "NX", TTL: 10 * time.Second}).Err(); err != nil {
				t.Logf("db %d: SET NX of the counter's name refused: %v", db, err)
			}
			got, gerr = c.Get(ctx, counter).Result()
			t.Logf("db %d: after SET %s 1 NX, GET = %q, %v (token %d)", db, counter, got, gerr, tok)
			if n, perr := strconv.ParseInt(got, 10, 64); gerr == nil && perr == nil && n < tok {
				t.Errorf("db %d: GET of the fenced lock's counter answers 1, below its token %d", db, tok)
			}
		}
	}
}
