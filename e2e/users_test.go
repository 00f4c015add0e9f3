package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestUsersAndPrefixes(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) {
		c.Users = []config.User{
			{Name: "team-a", Password: "pa", Prefix: "a:"},
			{Name: "team-b", Password: "pb", Prefix: "b:"},
			{Name: "ops", Password: "po", Admin: true},
		}
	})
	ctx := t.Context()
	as := func(user, pass string) *redis.Client {
		return h.Client(func(o *redis.Options) { o.Username, o.Password = user, pass })
	}
	a, b, ops := as("team-a", "pa"), as("team-b", "pb"), as("ops", "po")

	if err := h.Client().Ping(ctx).Err(); err == nil || err.Error() != "NOAUTH Authentication required." {
		t.Fatalf("PING before AUTH = %v", err)
	}
	if err := as("team-a", "wrong").Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS invalid username-password pair") {
		t.Fatalf("a wrong password = %v", err)
	}
	if err := h.Client().Do(ctx, "auth", "nopass").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Fatalf("AUTH to the default user, switched off by named users = %v", err)
	}

	if ok, err := a.SetNX(ctx, "a:job", "tok-a", 10*time.Second).Result(); !ok || err != nil {
		t.Fatalf("team-a locking its own key = %v, %v", ok, err)
	}
	noPerm := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
			t.Errorf("%s = %v; want NOPERM", what, err)
		}
	}
	noPerm("team-b taking team-a's key", b.SetNX(ctx, "a:job", "tok-b", 10*time.Second).Err())
	noPerm("team-b releasing team-a's key", b.Eval(ctx, harness.UnlockScript, []string{"a:job"}, "tok-a").Err())
	noPerm("team-b deleting team-a's key", b.Del(ctx, "a:job").Err())
	noPerm("team-b reading team-a's key", b.Get(ctx, "a:job").Err())
	noPerm("team-b hiding a key among its own", b.Exists(ctx, "b:x", "a:job").Err())
	noPerm("team-a listing locks", a.Do(ctx, "redlock", "locks").Err())
	if v, _ := a.Get(ctx, "a:job").Result(); v != "tok-a" {
		t.Fatalf("team-a's lock after team-b's attempts: %q", v)
	}
	if ok, err := b.SetNX(ctx, "b:job", "tok-b", 10*time.Second).Result(); !ok || err != nil {
		t.Fatalf("team-b locking its own key = %v, %v", ok, err)
	}

	locks, err := ops.Do(ctx, "redlock", "locks", "a:").Slice()
	if err != nil || len(locks) != 1 {
		t.Fatalf("REDLOCK LOCKS a: = %v, %v", locks, err)
	}
	if l := locks[0].([]any); l[0] != "a:job" || l[1] != "tok-a" || l[2].(int64) <= 9000 {
		t.Fatalf("listed lock = %v", l)
	}
	if all, _ := ops.Do(ctx, "redlock", "locks").Slice(); len(all) != 2 {
		t.Fatalf("REDLOCK LOCKS = %v, want both teams' locks", all)
	}
	if n, err := ops.Do(ctx, "redlock", "forceunlock", "a:job").Int(); n != 1 || err != nil {
		t.Fatalf("REDLOCK FORCEUNLOCK = %d, %v", n, err)
	}
	if err := a.Get(ctx, "a:job").Err(); err != redis.Nil {
		t.Fatalf("after the force unlock GET = %v", err)
	}
}
