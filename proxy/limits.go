package proxy

import (
	"fmt"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Limits are what the proxy lets its clients do: connections, request
// sizes, timeouts, the TTL of a lock that names none, and force release.
// DefaultLimits gives every default and Problems every bound; they are the
// only place either is written (the configuration embeds Limits; the YAML
// names are the tags).
type Limits struct {
	// DefaultTTL, when set, is given to SET NX without a TTL as a plain TTL
	// (the behaviour before connection-bound locks: the lock expires after
	// it whatever its holder does, and PTTL shows it). Default 0: such a SET
	// takes a connection-bound lock instead (boundlocks.go).
	DefaultTTL time.Duration `yaml:"default_ttl"`
	// BoundLease is the lease of a connection-bound lock (SET NX without a
	// TTL): the TTL it holds on the backends, renewed every session_tick
	// while its connection is open. If this proxy dies or loses its
	// backends, the lock is free at most this long after (plus lock_delay).
	// Default 0: 10s, or max_ttl when that is shorter. When set, at least
	// three session ticks and at most max_ttl.
	BoundLease time.Duration `yaml:"bound_lease"`
	// AllowForceRelease lets DEL/UNLINK delete a lock whoever holds it.
	// Default true (ShedLock and others release that way).
	AllowForceRelease bool `yaml:"allow_force_release"`
	// MaxClients caps client connections. Default 10000; at least 1.
	MaxClients int `yaml:"max_clients"`
	// MaxRequestSize caps one request, in bytes. Default 65536 (64 KiB): lock
	// commands are small (the largest are script texts of a few KB). At least 1024.
	MaxRequestSize int `yaml:"max_request_size"`
	// MaxArgs caps the arguments of one command. Default 4096; at least 16.
	MaxArgs int `yaml:"max_args"`
	// WriteTimeout closes a client connection whose replies cannot be
	// written for this long (it stopped reading). Default 10s; positive.
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// IdleTimeout closes client connections idle this long; 0 never. Default
	// 0. Subscribed connections and those holding session or
	// connection-bound locks are never closed for being idle.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// SessionTick is how often the proxy renews the session locks
	// (LOCK.ACQUIRE ... SESSION) of its connections, all in one batched
	// round; a session lock's TTL must be at least three ticks. Default
	// 500ms; positive.
	SessionTick time.Duration `yaml:"session_tick"`

	// What one connection, and all the connections of one user together,
	// may make the proxy keep and work for (issue 25): one hostile tenant
	// must not cost the others. 0 means no limit.

	// MaxSubscriptions caps the channels and patterns of one connection.
	// Default 1024.
	MaxSubscriptions int `yaml:"max_subscriptions"`
	// MaxPatternsPerUser caps the patterns (PSUBSCRIBE) of one user's
	// connections together, and MaxPatternBytesPerUser their total length:
	// every message on the user's channels is matched against them.
	// Defaults 256 and 16384.
	MaxPatternsPerUser     int `yaml:"max_patterns_per_user"`
	MaxPatternBytesPerUser int `yaml:"max_pattern_bytes_per_user"`
	// MaxSessionLocksPerClient and MaxSessionLocksPerUser cap the session
	// locks (LOCK.ACQUIRE ... SESSION: the proxy renews them) of one
	// connection and of one user. Defaults 1000 and 10000.
	MaxSessionLocksPerClient int `yaml:"max_session_locks_per_client"`
	MaxSessionLocksPerUser   int `yaml:"max_session_locks_per_user"`
	// MaxWaitersPerClient and MaxWaitersPerUser cap the LOCK.ACQUIRE ...
	// WAIT requests parked at once on one connection and for one user
	// (the proxy renews each one's place in its queue). Defaults 100 and 1000.
	MaxWaitersPerClient int `yaml:"max_waiters_per_client"`
	MaxWaitersPerUser   int `yaml:"max_waiters_per_user"`
	// LimitRefusalsPerUser is how many requests a second one user may have
	// refused for the limits above before its connections wait before
	// reading (refusals.go). Default 100; 0: no back-off.
	LimitRefusalsPerUser int `yaml:"limit_refusals_per_user"`
	// MaxWait caps LOCK.ACQUIRE's WAIT. Default 5m; at most a day.
	MaxWait time.Duration `yaml:"max_wait"`
}

// DefaultLimits returns the limits used where nothing else is said.
func DefaultLimits() Limits {
	return Limits{
		AllowForceRelease: true,
		MaxClients:        10000,
		MaxRequestSize:    64 << 10,
		MaxArgs:           4096,
		WriteTimeout:      10 * time.Second,
		SessionTick:       500 * time.Millisecond,

		MaxSubscriptions:         1024,
		MaxPatternsPerUser:       256,
		MaxPatternBytesPerUser:   16 << 10,
		MaxSessionLocksPerClient: 1000,
		MaxSessionLocksPerUser:   10000,
		MaxWaitersPerClient:      100,
		MaxWaitersPerUser:        1000,
		LimitRefusalsPerUser:     100,
		MaxWait:                  5 * time.Minute,
	}
}

// Problems lists every limit out of its bounds.
func (l Limits) Problems() []*quorum.SettingError {
	var errs []*quorum.SettingError
	bad := func(setting, format string, args ...any) {
		errs = append(errs, &quorum.SettingError{Setting: setting, Problem: fmt.Sprintf(format, args...)})
	}
	if l.MaxClients < 1 {
		bad("max_clients", "%d must be at least 1", l.MaxClients)
	}
	if l.MaxRequestSize < 1024 {
		bad("max_request_size", "%d bytes is below the 1024-byte minimum", l.MaxRequestSize)
	}
	if l.MaxArgs < 16 {
		bad("max_args", "%d is below the minimum of 16 (lock scripts take several keys and arguments)", l.MaxArgs)
	}
	if l.WriteTimeout <= 0 {
		bad("write_timeout", "%v must be positive", l.WriteTimeout)
	}
	if l.SessionTick <= 0 {
		bad("session_tick", "%v must be positive", l.SessionTick)
	}
	if l.SessionTick > 0 && l.BoundLease > 0 && l.BoundLease < 3*l.SessionTick {
		bad("bound_lease", "%v is below three session ticks (session_tick %v): the renewer must reach a lock twice within its lease",
			l.BoundLease, l.SessionTick)
	}
	for _, p := range []struct {
		setting string
		n       int
	}{{"max_subscriptions", l.MaxSubscriptions}, {"max_patterns_per_user", l.MaxPatternsPerUser},
		{"max_pattern_bytes_per_user", l.MaxPatternBytesPerUser}, {"max_session_locks_per_client", l.MaxSessionLocksPerClient},
		{"max_session_locks_per_user", l.MaxSessionLocksPerUser}, {"max_waiters_per_client", l.MaxWaitersPerClient},
		{"max_waiters_per_user", l.MaxWaitersPerUser}, {"limit_refusals_per_user", l.LimitRefusalsPerUser}} {
		if p.n < 0 {
			bad(p.setting, "%d must not be negative (0: no limit)", p.n)
		}
	}
	if l.MaxWait < 0 || l.MaxWait > maxWait {
		bad("max_wait", "%v must be from 0 (no limit but a day) to 24h", l.MaxWait)
	}
	for _, p := range []struct {
		setting string
		d       time.Duration
	}{{"default_ttl", l.DefaultTTL}, {"idle_timeout", l.IdleTimeout}, {"bound_lease", l.BoundLease}} {
		if p.d < 0 {
			bad(p.setting, "%v must not be negative", p.d)
		}
	}
	return errs
}

// maxWait bounds LOCK.ACQUIRE's WAIT, and max_wait: a day.
const maxWait = 24 * time.Hour
