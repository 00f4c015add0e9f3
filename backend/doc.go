// Package backend connects the proxy to its Redis masters, and is the only
// package that does: Node is a quorum.Node (each engine operation one
// embedded Lua script, batched per backend into one pipelined write of at
// most 512 locks of work, so one flood cannot hold a lone round's reply
// behind it; server error replies reported as *quorum.ReplyError), and
// PubSub a wake.Link. The lock path speaks RESP2 on its own connection per
// backend (link.go, resp.go); go-redis serves the rest (identity checks,
// scans, repairs, pub/sub). It assumes each backend is an independent Redis
// master that runs Lua scripts, and that nothing else writes the keys the
// proxy keeps.
package backend
