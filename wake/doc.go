// Package wake carries lock wake-ups: the PUBLISH / SUBSCRIBE messages lock
// clients wait on (Redisson's "0" on redisson_lock__channel:{name}, Spring's
// unlock notices). A message published through any proxy replica reaches
// the subscribers of every replica once.
//
// Each message goes to every backend on an internal channel, wrapped with a
// unique id; each replica listens on every backend for the channels its
// clients subscribed to, and delivers the first copy of each id and drops
// the rest. A replica hears a message as long as one backend carried it
// both ways.
//
// Client patterns never reach a backend: a backend matching a hostile glob
// against a long channel name can spend seconds on one PUBLISH, stalling
// every lock round it serves. A replica whose clients hold patterns listens
// for everything with one trailing-star pattern (cheap for Redis) and
// matches its clients' patterns itself (Match: no exponential case), once
// per message and per scope (a tenant: Scoped), each scope in its own
// goroutine with a bounded queue, outside the bus lock (patterns.go): one
// tenant's patterns cost nothing to another's messages or to channel
// subscribers such as the proxy's waiters.
//
// The bus reaches the backends through a Link per backend (backend.PubSub
// over go-redis in the proxy, which main wires); it assumes a Link renews
// its subscriptions after a reconnect. Subscribe, Publish and Link calls
// take a ctx; Close ends the receivers.
package wake
