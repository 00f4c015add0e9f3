// Package app is the redlock-proxy command: Main reads the command line
// (-probe URL, -version, or the configuration, refusing unknown REDLOCK_*
// variables) and Run is the whole process (the client listener bound first,
// SIGINT/SIGTERM a graceful shutdown, SIGHUP ignored). Start wires a
// config.Config onto backend nodes and wake-up links (go-redis), the quorum
// engine, the wake bus and the proxy server, starting embedded in-memory
// backends when none are configured, and serves the optional HTTP
// (metrics, health; /readyz never ready with embedded backends; the status
// page, internal/statuspage) and pprof listeners. Start and Listen are Run's parts, for tests that run a proxy
// in-process.
package app
