// Command redlock-proxy is a Redis-protocol endpoint whose lock commands are
// Redlock rounds across independent Redis masters. See README.md.
//
// It is wired in internal/app: the backends (backend), the quorum engine
// (quorum), the wake-up bus (wake) and the RESP server (proxy), configured
// by config.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/redlock-proxy/redlock-proxy/internal/app"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-probe" {
		os.Exit(app.Probe(os.Args[2])) // the container's health check: no curl in the image
	}
	err := app.Run(os.Args[1:], os.Getenv, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return
	case strings.HasPrefix(err.Error(), "config:"):
		// One problem per line, as written: not a log record with escaped newlines.
		fmt.Fprintln(os.Stderr, "redlock-proxy: invalid configuration (redlock-proxy -h lists every setting):")
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintln(os.Stderr, "  "+line)
		}
		os.Exit(2)
	case errors.Is(err, app.ErrBootstrap):
		fmt.Fprintln(os.Stderr, "redlock-proxy "+err.Error()) // one reason per line, as written
		os.Exit(1)
	}
	slog.New(slog.NewTextHandler(os.Stderr, nil)).Error("redlock-proxy stopped", "err", err)
	os.Exit(1)
}
