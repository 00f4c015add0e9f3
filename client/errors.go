package client

import (
	"errors"

	"github.com/redis/go-redis/v9"
)

// Errors a lock operation returns. An error reply of the proxy comes as a
// *ProxyError: errors.Is tells ErrNoQuorum (the service is sick: retry
// later) from ErrTTL (the request was wrong), and errors.As still finds
// go-redis's redis.Error in it.
var (
	// ErrNotObtained: another owner holds the lock.
	ErrNotObtained = errors.New("redlock-proxy: lock not obtained")
	// ErrLockNotHeld: the lock is not (any more) held by this owner.
	ErrLockNotHeld = errors.New("redlock-proxy: lock not held")
	// ErrNoSession: WithSession was asked of a client that cannot open a
	// connection of its own (not a *redis.Client).
	ErrNoSession = errors.New("redlock-proxy: WithSession needs a *redis.Client")
	// ErrNoQuorum: too few backends answered (NOQUORUM); nothing was granted.
	ErrNoQuorum = errors.New("redlock-proxy: no quorum")
	// ErrTTL: the proxy refused the TTL (not positive, above max_ttl, or too
	// short to be granted).
	ErrTTL = errors.New("redlock-proxy: ttl refused")
)

// ProxyError is an error reply of the proxy: Kind is ErrNoQuorum or ErrTTL,
// Err the go-redis error with the proxy's text.
type ProxyError struct {
	Kind error
	Err  error
}

func (e *ProxyError) Error() string   { return e.Err.Error() }
func (e *ProxyError) Unwrap() []error { return []error{e.Kind, e.Err} }

// typed wraps the proxy's error replies that a caller acts on in a
// *ProxyError; it returns any other error as it is.
func typed(err error) error {
	switch {
	case err == nil:
		return nil
	case redis.HasErrorPrefix(err, "NOQUORUM"):
		return &ProxyError{Kind: ErrNoQuorum, Err: err}
	case redis.HasErrorPrefix(err, "lock TTL "): // after "ERR "
		return &ProxyError{Kind: ErrTTL, Err: err}
	}
	return err
}
