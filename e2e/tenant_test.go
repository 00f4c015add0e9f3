package e2e

// Tenancy (issue 23, A): a key or channel belongs to exactly one user.

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestTenantKeyBelongsToOneUser: search's key search:{billing:x} starts with
// search: and has billing: inside its braces. It is search's alone: billing
// can neither take, read, release nor force-release it, nor hear or fake
// the release notices of Redisson's channel for it; search can.
func TestTenantKeyBelongsToOneUser(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) {
		c.Users = []config.User{
			{Name: "billing", Password: "pb", Prefix: "billing:"},
			{Name: "search", Password: "ps", Prefix: "search:"},
		}
	})
	ctx := t.Context()
	as := func(user, pass string) *redis.Client {
		return h.Client(func(o *redis.Options) { o.Username, o.Password = user, pass })
	}
	billing, search := as("billing", "pb"), as("search", "ps")
	const key, ch = "search:{billing:x}", "redisson_lock__channel:search:{billing:x}"
	if ok, err := search.SetNX(ctx, key, "tok-s", 30*time.Second).Result(); !ok || err != nil {
		t.Fatalf("search locking its own key = %v, %v", ok, err)
	}
	noPerm := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
			t.Errorf("%s = %v; want NOPERM", what, err)
		}
	}
	forceUnlock := clientScript(t, shaRForce)
	noPerm("billing deleting it", billing.Del(ctx, key).Err())
	noPerm("billing unlinking it", billing.Unlink(ctx, key).Err())
	noPerm("billing force-unlocking it the Redisson way", billing.Eval(ctx, forceUnlock, []string{key, "redisson_lock__channel:{billing:x}"}, 0).Err())
	noPerm("billing releasing it", billing.Eval(ctx, harness.UnlockScript, []string{key}, "tok-s").Err())
	noPerm("billing reading it", billing.Get(ctx, key).Err())
	noPerm("billing taking it once free", billing.SetNX(ctx, key, "tok-b", 30*time.Second).Err())
	noPerm("billing taking it natively", billing.Do(ctx, "LOCK.ACQUIRE", key, "b", 30000).Err())
	noPerm("billing subscribing to its Redisson channel", billing.Do(ctx, "SUBSCRIBE", ch).Err())
	noPerm("billing publishing on its Redisson channel", billing.Publish(ctx, ch, "0").Err())
	if v, err := search.Get(ctx, key).Result(); v != "tok-s" || err != nil {
		t.Fatalf("search's lock after billing's attempts: %q, %v", v, err)
	}
	// Search's own derived names are search's.
	if err := search.Publish(ctx, ch, "0").Err(); err != nil {
		t.Errorf("search publishing on its lock's Redisson channel: %v", err)
	}
	if err := search.Publish(ctx, "redisson_lock__channel:{search:y}", "0").Err(); err != nil {
		t.Errorf("search publishing on redisson_lock__channel:{search:y}: %v", err)
	}
	noPerm("billing publishing on redisson_lock__channel:{search:y}", billing.Publish(ctx, "redisson_lock__channel:{search:y}", "0").Err())
	if n, err := search.Eval(ctx, forceUnlock, []string{key, ch}, 0).Int(); n != 1 || err != nil {
		t.Fatalf("search force-unlocking its own key = %d, %v", n, err)
	}
}

// TestBackendRunIDsForAdminsOnly: INFO redlock shows the backends' run_ids
// (what a deployment marker names) to an admin, and to nobody else when
// users are configured.
func TestBackendRunIDsForAdminsOnly(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) {
		c.Users = []config.User{
			{Name: "billing", Password: "pb", Prefix: "billing:"},
			{Name: "ops", Password: "po", Admin: true},
		}
	})
	ctx := t.Context()
	var runIDs []string
	for _, b := range h.Backend {
		info, err := b.Client().Info(ctx, "server").Result()
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(info, "run_id:")
		if i < 0 {
			t.Fatalf("backend INFO without run_id: %q", info)
		}
		runIDs = append(runIDs, strings.Fields(info[i+len("run_id:"):])[0])
	}
	info := func(user, pass string) string {
		c := h.Client(func(o *redis.Options) { o.Username, o.Password = user, pass })
		s, err := c.Info(ctx, "redlock").Result()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	harness.Eventually(t, "the admin to see every backend's run_id", func() bool {
		s := info("ops", "po")
		for _, id := range runIDs {
			if !strings.Contains(s, id) {
				return false
			}
		}
		return true
	})
	tenant := info("billing", "pb")
	for _, id := range runIDs {
		if strings.Contains(tenant, id) {
			t.Fatalf("a tenant's INFO redlock shows backend run_id %s:\n%s", id, tenant)
		}
	}
}
