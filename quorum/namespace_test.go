package quorum

import (
	"strconv"
	"strings"
	"testing"
)

// TestNamespaceKeyInjective: NamespaceKey maps each (database, key) to a
// key of its own, SplitNamespace undoes it, and only the engine's own names
// are internal: a database's keys are clients' keys, whatever they hold.
func TestNamespaceKeyInjective(t *testing.T) {
	keys := []string{"", "k", ":", "__redlock:db9:k", "db9:k", "{k}", "__redlock:m:k"}
	seen := map[string]string{}
	for db := range 16 {
		for _, k := range keys {
			if strings.HasPrefix(k, InternalPrefix) {
				continue // a proxy refuses every client name under the prefix
			}
			m := NamespaceKey(db, k)
			id := strconv.Itoa(db) + "/" + k
			if prev, ok := seen[m]; ok {
				t.Fatalf("NamespaceKey(%s) = NamespaceKey(%s) = %q", id, prev, m)
			}
			seen[m] = id
			if n, got := SplitNamespace(m); n != db || got != k {
				t.Errorf("SplitNamespace(%q) = %d, %q; want %d, %q", m, n, got, db, k)
			}
			if db > 0 && IsInternal(m) {
				t.Errorf("IsInternal(%q): a database's key is a client's", m)
			}
		}
	}
	for _, k := range []string{"__redlock:db", "__redlock:db:k", "__redlock:db0:k", "__redlock:db09:k", "__redlock:db+9:k",
		"__redlock:db100:k", "__redlock:dbx:k", MetaKey("k"), IntactKey, CountersKey, TokenKey, MaxTTLKey, WriterKey("c"), QueueKey("k"), QueueLeaseKey("k")} {
		if !IsInternal(k) {
			t.Errorf("IsInternal(%q) = false; want the engine's own", k)
		}
	}
}
