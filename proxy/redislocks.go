package proxy

import "github.com/redlock-proxy/redlock-proxy/quorum"

// redisLocks is the Redis-style locks family: SET, GET, PTTL, TTL, EXISTS,
// DEL, UNLINK, DELEX, DELIFEQ, and HEXISTS and HGET of Redisson's hash
// locks (lockcmds.go, setargs.go), each a quorum round or a read by quorum,
// run through the lock service. It keeps no state of its own: a lock lives
// on the backends, a connection-bound one in the lock service's book.
type redisLocks struct {
	engine  *quorum.Engine
	opts    *options
	metrics *Metrics
	native  *lockService
}
