package proxy

import (
	"strconv"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Databases. SELECT n (0-15, as a default Redis) picks the connection's
// lock namespace: database n's key k is quorum.NamespaceKey(n, k) on the
// backends, "__redlock:db<n>:k" for n > 0, k itself in database 0. Clients
// can never name a key under "__redlock:" (reserved.go), so no key of one
// database is a key of another, and the engine treats the mapped keys as
// any lock key: notes, fencing counters, queues and wait channels follow
// them, per database. Permissions (a user's prefix) and the reserved check
// judge the client's own key, before it is mapped (admit, then mapKeys);
// every reply that names a key (REDLOCK LOCKS, the channel and message a
// script publishes) shows the client's own (clientKey). Pub/sub channels
// are not per database, as on Redis.
const databases = 16

// errDBIndex is Redis's own answer to SELECT 16 and beyond.
var errDBIndex = respError("ERR DB index is out of range")

// parseDB reads a database index, 0-15: errNotInteger, or errDBIndex.
func parseDB(b []byte) (int, error) {
	n, err := strconv.Atoi(string(b))
	switch {
	case err != nil || strconv.Itoa(n) != string(b): // Redis's integers: no sign, no leading zero
		return 0, errNotInteger
	case n < 0 || n >= databases:
		return 0, errDBIndex
	}
	return n, nil
}

// mapKeys rewrites an admitted command's keys into its connection's
// database (scripts map theirs when they run: mapScriptKeys).
func (c *session) mapKeys(cmd *command, args [][]byte) {
	if c.db == 0 || cmd.flags&flagScriptKeys != 0 {
		return
	}
	keys := keysOf(cmd, args) // a slice of args: mapped in place
	for i, k := range keys {
		keys[i] = []byte(quorum.NamespaceKey(c.db, string(k)))
	}
}

// mapScriptKeys is a script call's KEYS in database db, as a new slice.
func mapScriptKeys(db int, keys [][]byte) [][]byte {
	if db == 0 {
		return keys
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = []byte(quorum.NamespaceKey(db, string(k)))
	}
	return out
}

// clientKey is the key a client named, for a key on the backends.
func clientKey(key string) string {
	_, k := quorum.SplitNamespace(key)
	return k
}

// inDB reports whether a backend key is one of database db's, and which.
func inDB(db int, key string) (string, bool) {
	n, k := quorum.SplitNamespace(key)
	return k, n == db
}
