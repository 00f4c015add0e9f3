// Package quorum is the Redlock engine: it turns one lock operation into a
// round sent in parallel to N independent Redis masters and decides it by a
// majority, Q = N/2 + 1. It knows nothing about RESP or client connections.
//
// A round fans out to every node at once, each call bounded by a per-node
// timeout, and decides as soon as Q nodes agreed or Q can no longer be
// reached; nodes still out finish in the background. Acquire and Extend write
// the TTL padded for clock drift, ceil(t/(1-drift_factor)) + 2ms, and succeed
// only if more than the minimum validity is left of t, measured on the
// monotonic clock from before the first send. A failed Acquire rolls back
// (compare-and-delete) on every node where its write may have landed, and
// returns only after that rollback. Rounds for the same (key, value) never
// overlap inside one Engine.
//
// The safety argument assumes what Redlock assumes:
//   - the nodes fail independently and share no replication;
//   - clock rates differ by at most the drift factor, and clocks do not jump;
//   - a node never loses a key before its TTL, i.e. a node that restarts
//     empty must not count toward a quorum until every lock it could have
//     held has expired (restart quarantine);
//   - a client stops using a lock when its window ends, which a process
//     pause after the reply can break: fencing tokens exist for that.
//
// The engine holds no lock state itself; any number of engines, in any
// number of processes, can share one set of nodes.
package quorum
