package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"

	"github.com/redlock-proxy/redlock-proxy/config"
)

// Main is the command: -probe URL, -version, or the proxy (Run) with its
// configuration from args and environ (os.Environ's form). It returns the
// exit status: 2 for a configuration the proxy refuses (one problem per
// line), 1 for a proxy that stopped on an error.
func Main(args, environ []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch arg := strings.TrimPrefix(args[0], "-"); {
		case arg == "-probe" || arg == "probe":
			if len(args) != 2 {
				fmt.Fprintln(stderr, "usage: redlock-proxy -probe URL (e.g. -probe http://127.0.0.1:9121/readyz): GET URL and exit 0 on 200 OK, else 1")
				return 2
			}
			return Probe(args[1]) // the container's health check: no curl in the image
		case strings.HasPrefix(arg, "-probe=") || strings.HasPrefix(arg, "probe="):
			_, url, _ := strings.Cut(arg, "=")
			return Probe(url)
		case (arg == "-version" || arg == "version") && len(args) == 1:
			ver, rev := Version()
			fmt.Fprintf(stdout, "redlock-proxy %s (commit %s, %s)\n", ver, rev, runtime.Version())
			return 0
		}
	}
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	err := config.CheckEnviron(environ)
	if err == nil {
		err = Run(args, func(k string) string { return vars[k] }, stderr)
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case strings.HasPrefix(err.Error(), "config:"):
		// One problem per line, as written: not a log record with escaped newlines.
		fmt.Fprintln(stderr, "redlock-proxy: invalid configuration (redlock-proxy -h lists every setting):")
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintln(stderr, "  "+line)
		}
		return 2
	case errors.Is(err, ErrBootstrap):
		fmt.Fprintln(stderr, "redlock-proxy "+err.Error()) // one reason per line, as written
		return 1
	}
	slog.New(slog.NewTextHandler(stderr, nil)).Error("redlock-proxy stopped", "err", err)
	return 1
}

// Exit runs Main on this process's arguments and environment and exits.
func Exit() { os.Exit(Main(os.Args[1:], os.Environ(), os.Stdout, os.Stderr)) }
