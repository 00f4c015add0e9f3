// Command gen writes the redlock-proxy Grafana dashboard JSON (run by go
// generate in deploy/grafana).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/redlock-proxy/redlock-proxy/deploy/grafana"
)

func main() {
	out := flag.String("o", "redlock-proxy.json", "file to write")
	flag.Parse()
	b, err := grafana.New().JSON()
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
