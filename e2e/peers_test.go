package e2e

import (
	"strings"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestInfoClusterSection: INFO (default, all, and the section asked by
// name) carries # Cluster with cluster_enabled:0, which tools read (redis-py's
// test setup raised KeyError: 'cluster_enabled').
func TestInfoClusterSection(t *testing.T) {
	h := harness.New(t, 3, nil)
	c := h.Client()
	for _, sections := range [][]string{nil, {"cluster"}, {"all"}} {
		info, err := c.Info(t.Context(), sections...).Result()
		if err != nil || !strings.Contains(info, "# Cluster\r\ncluster_enabled:0\r\n") {
			t.Fatalf("INFO %v = %q, %v; want # Cluster with cluster_enabled:0", sections, info, err)
		}
	}
}

// TestHugeTTLExceedsMaxTTL: a TTL Redis accepts but longer than any
// time.Duration (node-redlock's tests ask for 28,500 years) gets the same
// "exceeds max_ttl" refusal as any other TTL over max_ttl, from every
// command that takes one; one Redis refuses itself still gets Redis's error.
func TestHugeTTLExceedsMaxTTL(t *testing.T) {
	h := harness.New(t, 3, nil)
	c, ctx := h.Client(), t.Context()
	const years28500 = "899377200000000" // ms
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"set", "k", "v", "NX", "PX", years28500}, "ERR lock TTL 899377200000000 ms exceeds max_ttl "},
		{[]any{"set", "k", "v", "NX", "EX", "899377200000"}, "ERR lock TTL 899377200000000 ms exceeds max_ttl "},
		{[]any{"lock.acquire", "k", "o", years28500}, "ERR lock TTL 899377200000000 ms exceeds max_ttl "},
		{[]any{"evalsha", "96da70f7716f27d278a5218544df37fd8b0a5e4c", "1", "k", "o", years28500}, "ERR lock TTL 899377200000000 ms exceeds max_ttl "},
		{[]any{"set", "k", "v", "NX", "PX", "9223372036854775807"}, "ERR invalid expire time in 'set' command"},
		{[]any{"set", "k", "v", "NX", "EX", "9223372036854775807"}, "ERR invalid expire time in 'set' command"},
	} {
		err := c.Do(ctx, tc.args...).Err()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v = %v; want %q", tc.args, err, tc.want)
		}
	}
}
