// Package app wires a redlock-proxy process: it maps a config.Config onto
// backend nodes and wake-up links (go-redis), the quorum engine, the wake
// bus and the proxy server, starts embedded in-memory backends when none
// are configured, and serves the optional HTTP (metrics, health) and pprof
// listeners. Run is the whole process; Start and Listen are its parts, for
// tests that run a proxy in-process.
package app
