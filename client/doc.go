// Package client takes locks from a redlock-proxy through any go-redis
// client, with the proxy's native commands: each lock comes with a fencing
// token, larger than every token before it, to send along with every write
// the lock protects (see README, "Fencing and sessions").
//
//	c := client.New(rdb)
//	lock, err := c.Obtain(ctx, "job:42", 30*time.Second)
//	if errors.Is(err, client.ErrNotObtained) { ... }       // another owner holds it
//	defer lock.Release(ctx)
//	store.Write(data, lock.Token())                        // the store refuses older tokens
//
// WithWait queues for the lock (fair, across proxy replicas) instead of
// failing at once; WithSession binds it to a connection of its own, which
// the proxy renews it over and releases it with, and Lock.Done tells the
// holder when that session ended. A Lock may be used from several
// goroutines.
//
// The proxy's refusals come as *ProxyError: errors.Is(err, ErrNoQuorum)
// when too few backends answered (retry later), ErrTTL when the TTL was
// refused (the request was wrong); the go-redis error stays inside.
package client
