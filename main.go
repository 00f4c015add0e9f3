// Command redlock-proxy is a Redis-protocol endpoint whose lock commands are
// Redlock rounds across independent Redis masters. See README.md.
//
// It is wired in internal/app: the command line (app.Main: -probe, -version,
// the configuration), the backends (backend), the quorum engine (quorum),
// the wake-up bus (wake) and the RESP server (proxy), configured by config.
package main

import "github.com/redlock-proxy/redlock-proxy/internal/app"

func main() { app.Exit() }
