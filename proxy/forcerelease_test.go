package proxy

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// With allow_force_release off, every way to remove a lock without its
// owner's value is refused and names the setting: DEL, UNLINK, SET XX,
// Redisson's forceUnlock and Spring 5.5.7-6.1.2's delete-and-notify.
func TestForceReleaseOffRefusesEveryForcedRemoval(t *testing.T) {
	_, addr := serve(t, WithForceRelease(false))
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	ctx := t.Context()
	for what, args := range map[string][]any{
		"DEL":                       {"del", "{k}"},
		"UNLINK":                    {"unlink", "{k}"},
		"SET XX":                    {"set", "{k}", "v", "xx", "px", 1000},
		"Redisson forceUnlock":      {"evalsha", "605e338249a7a1d40df83b04f7658354f883b41b", 2, "{k}", "redisson_lock__channel:{k}", 0, "PUBLISH"},
		"Spring 5.5.7 unlock":       {"evalsha", "c1ae6c899d164de076f40ffe82eba8fb8e27af6c", 1, "{k}", "registry-channel"},
		"Spring 5.5.7 unlock (DEL)": {"evalsha", "20b5c3728736e2367b496c16390f9df56916a76f", 1, "{k}", "registry-channel"},
	} {
		err := c.Do(ctx, args...).Err()
		if err == nil || !strings.Contains(err.Error(), "allow_force_release: false") {
			t.Errorf("%s with force release off = %v; want refused, naming allow_force_release", what, err)
		}
	}
}
