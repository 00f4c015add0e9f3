package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// bsmV10Obtain is the SHA1 bsm/redislock v0.10.0 sends its obtain script
// by (CLIENTS.md): KEYS the lock keys, ARGV[1] the value (token and
// metadata), ARGV[2] the token's length, ARGV[3] the TTL in ms; +OK when
// granted, nil when taken. The library reads any reply but nil as granted.
// The proxy knows it now (TestBsmRedislockV10).
const bsmV10Obtain = "eb0c00d98f6f33b4262419a509002884540f30be"

// inHouseObtain is an in-house script in bsm/redislock v0.10's convention
// (our own text, written from its documented behaviour; one key, no
// re-obtain): +OK when granted, nil when taken, and a client that reads any
// reply but nil as granted. It is what an operator registers.
var inHouseObtain = redis.NewScript(`return redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[3]) and redis.status_reply("OK") or false`)

// obtainAsBsmV10 sends what bsm/redislock v0.10 sends on the wire for one
// key (go-redis's EVALSHA, then EVAL on NOSCRIPT) and judges the reply as
// it does: nil is "not obtained", any other reply "obtained".
func obtainAsBsmV10(ctx context.Context, c *redis.Client, key, token string, ttlMs int) (bool, error) {
	err := inHouseObtain.Run(ctx, c, []string{key}, token, len(token), ttlMs).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

// TestRegisteredAcquireGrantsOnce: an obtain script in bsm/redislock
// v0.10's convention, registered by an operator with that convention (OK
// when granted, nil when taken), raced by 100 goroutines: exactly one
// obtains the lock. Before reply conventions a registered acquire answered
// 0 when taken, which such a client reads as obtained: 100 of 100 won
// (seen with bsm v0.10's own SHA1 registered, before the proxy knew it).
func TestRegisteredAcquireGrantsOnce(t *testing.T) {
	h := harness.New(t, 5, func(c *config.Config) {
		c.Scripts = []config.Script{{SHA1: inHouseObtain.Hash(), Meaning: "acquire", Key: 1, Owner: 1, TTL: 3, Granted: "OK", Taken: "nil"}}
	})
	c := h.Client()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		won  []string
		errs []error
	)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := fmt.Sprintf("token-%03d", i)
			ok, err := obtainAsBsmV10(t.Context(), c, "bsm10:lock", token, 30000)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				won = append(won, token)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	if len(won) != 1 || len(errs) != 0 {
		t.Fatalf("%d of 100 concurrent obtains won (errors %v); want exactly 1, no errors", len(won), errs)
	}
	if n := h.Holders("bsm10:lock", won[0]); n < 3 {
		t.Fatalf("the winner %s holds the lock on %d of 5 backends", won[0], n)
	}
}

// TestRegisteredConventionRequired: an acquire or extend registered without
// its reply convention is refused at config load, saying why; so is a
// convention whose two replies are the same. A release may leave it out
// (1/0). And a file that gives one loads.
func TestRegisteredConventionRequired(t *testing.T) {
	sha := inHouseObtain.Hash()
	for _, tc := range []struct {
		yaml, want string
	}{
		{"{sha1: " + bsmV10Obtain + ", meaning: acquire, owner: 1, ttl: 3, granted: OK, taken: nil}", "knows already (obtain all keys): remove this entry"},
		{"{sha1: " + sha + ", meaning: acquire, owner: 1, ttl: 3}", "needs its reply convention, granted and taken"},
		{"{sha1: " + sha + ", meaning: acquire, ttl: 3, granted: OK}", "needs its reply convention, granted and taken"},
		{"{sha1: " + sha + ", meaning: extend, granted: 1}", "needs its reply convention, granted and not_held"},
		{"{sha1: " + sha + ", meaning: acquire, granted: 1, taken: 1}", "could not tell them apart"},
		{"{sha1: " + sha + ", meaning: acquire, granted: OK, taken: none}", "not a reply this proxy can give"},
		{"{sha1: " + sha + ", meaning: acquire, granted: OK, not_held: nil}", "not_held does not apply to meaning acquire"},
		{"{sha1: " + sha + ", meaning: acquire, granted: OK, taken: nil}", ""},
		{"{sha1: " + sha + ", meaning: extend, granted: 1, not_held: 0}", ""},
		{"{sha1: " + sha + ", meaning: release}", ""},
	} {
		path := filepath.Join(t.TempDir(), "proxy.yaml")
		if err := os.WriteFile(path, []byte("scripts:\n  - "+tc.yaml+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load([]string{"-config", path}, func(string) string { return "" }, io.Discard)
		if err == nil {
			err = cfg.Validate()
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v; want it to load", tc.yaml, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "scripts[0]")):
			t.Errorf("%s: %v; want an error on scripts[0] saying %q", tc.yaml, err, tc.want)
		}
	}
}

// TestUnknownScriptAsksForConvention: the unknown-script error no longer
// invites a registration that would be unsafe: it says the reply convention
// is required.
func TestUnknownScriptAsksForConvention(t *testing.T) {
	h := harness.New(t, 3, nil)
	err := inHouseObtain.Eval(t.Context(), h.Client(), []string{"k"}, "tok", 3, 1000).Err()
	if err == nil || !strings.Contains(err.Error(), "ERR unknown script") || !strings.Contains(err.Error(), "reply convention") ||
		!strings.Contains(err.Error(), "required") {
		t.Fatalf("unknown script = %v; want the error to say a reply convention is required", err)
	}
}
