package proxy

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// What the HTTP status page (internal/statuspage) reads and does, through
// the same checks and audit as the RESP admin commands: it holds no state
// of its own.

// ErrNotAdmin: the credentials open a user who is not an admin.
var ErrNotAdmin = errors.New("NOPERM this user is not an admin")

// AuthRequired reports whether clients must authenticate (requirepass or
// users configured); without it everyone is an admin.
func (s *Server) AuthRequired() bool { return s.opts.authRequired() }

// AuthenticateAdmin checks a user name ("" for the default user) and
// password as AUTH does, with its throttling of failures from addr (a
// failed try pauses before it returns), and returns the user's name when
// it is an admin. errWrongPass-style errors for bad credentials, ErrNotAdmin
// for a valid user without admin rights.
func (s *Server) AuthenticateAdmin(ctx context.Context, addr, name, password string) (string, error) {
	if !s.opts.authRequired() {
		return "default", nil
	}
	if name == "" {
		name = "default"
	}
	u, err := s.authenticate(name, []byte(password))
	if err != nil {
		host, _, splitErr := net.SplitHostPort(addr)
		if splitErr != nil {
			host = addr
		}
		pause, logIt, count := s.auth.failed(host, 1, time.Now())
		if logIt {
			s.opts.logger.Warn("AUTH failed", "addr", host, "user", name, "failures", count, "pause", pause.String(), "via", "http")
		}
		sleep(ctx, pause)
		return "", err
	}
	if !u.Admin {
		return "", ErrNotAdmin
	}
	return u.Name, nil
}

// ForceUnlock deletes key whoever holds it, as REDLOCK FORCEUNLOCK does,
// and writes the same audit line naming user and client (an address).
func (s *Server) ForceUnlock(ctx context.Context, user, client, key string) (existed bool, err error) {
	s.native.unbook(key, "") // out of every session book first: no renewal restores it
	existed, err = s.engine.ForceRelease(ctx, key)
	// The key by a fingerprint an operator can match (printf %s KEY |
	// sha256sum | cut -c1-16) without the log showing it, unless log_values.
	// A database's key by the client's name for it, and its database.
	db, name := quorum.SplitNamespace(key)
	sum := sha256.Sum256([]byte(name))
	attrs := []any{"user", user, "client", client, "existed", existed, "db", db, "key_sha256", hex.EncodeToString(sum[:8])}
	if s.opts.logValues {
		attrs = append(attrs, "key", name)
	}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	s.opts.logger.Warn("audit: force unlock", attrs...)
	return existed, err
}

// SessionLock is a connection-bound lock this replica renews.
type SessionLock struct {
	Key, Owner string
	Client     int64         // the holding connection's id (CLIENT ID)
	TTL        time.Duration // asked at each renewal
	Left       time.Duration // of its current window
}

// SessionLocks lists the session locks this replica renews, by key.
func (s *Server) SessionLocks() []SessionLock {
	now := time.Now()
	ss := &s.native.sessions
	ss.mu.Lock()
	var out []SessionLock
	for c, mine := range ss.book {
		for _, l := range mine {
			out = append(out, SessionLock{Key: l.id.key, Owner: l.id.owner, Client: c.ident(), TTL: l.ttl, Left: max(l.until.Sub(now), 0)})
		}
	}
	ss.mu.Unlock()
	slices.SortFunc(out, func(a, b SessionLock) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// KeyCount is a key and a count.
type KeyCount struct {
	Key   string
	Count int64
}

// waiters counts the LOCK.ACQUIRE ... WAIT requests waiting on this replica
// per key.
type waiters struct {
	mu    sync.Mutex
	byKey map[string]int64
}

func (w *waiters) add(key string, n int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byKey == nil {
		w.byKey = map[string]int64{}
	}
	if w.byKey[key] += n; w.byKey[key] <= 0 {
		delete(w.byKey, key)
	}
}

// Waiters lists the keys requests wait for on this replica (LOCK.ACQUIRE
// ... WAIT), with how many wait for each, most first.
func (s *Server) Waiters() []KeyCount {
	s.native.waiters.mu.Lock()
	out := make([]KeyCount, 0, len(s.native.waiters.byKey))
	for k, n := range s.native.waiters.byKey {
		out = append(out, KeyCount{k, n})
	}
	s.native.waiters.mu.Unlock()
	SortCounts(out)
	return out
}

// SortCounts orders counts most first, then by key.
func SortCounts(kc []KeyCount) {
	slices.SortFunc(kc, func(a, b KeyCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Key, b.Key))
	})
}

// Waiting is how many requests wait now (INFO's blocked_clients).
func (s *Server) Waiting() int64 { return s.native.waiting.Load() }

// MaxClients is the max_clients limit (INFO's maxclients).
func (s *Server) MaxClients() int { return s.opts.MaxClients }
