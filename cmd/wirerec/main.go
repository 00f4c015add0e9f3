package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"

	"github.com/redlock-proxy/redlock-proxy/internal/transcript"
)

func main() {
	out := flag.String("out", "", "the transcript file to write")
	var h transcript.Header
	flag.StringVar(&h.Client, "client", "", "the client library and version")
	flag.StringVar(&h.Scenario, "scenario", "", "what the client does")
	flag.Int64Var(&h.LeaseMS, "lease-ms", 0, "the longest TTL the client asks for, in ms")
	flag.BoolVar(&h.Racy, "racy", false, "the client's threads race for one lock (see transcript.Header)")
	flag.StringVar(&h.Upstream, "upstream", "", `"redis" when UPSTREAM is one plain redis-server with an empty script cache (see transcript.Header)`)
	flag.BoolVar(&h.Users, "users", false, "the client logs in as app/app-pass or billing/b-pass (prefix billing:)")
	flag.Parse()
	pairs := flag.Args()
	h.Replicas = len(pairs)
	if *out == "" || h.Client == "" || h.LeaseMS <= 0 || len(pairs) == 0 {
		fmt.Fprintln(os.Stderr, "usage: wirerec -out FILE -client NAME -scenario TEXT -lease-ms MS LISTEN=UPSTREAM...")
		os.Exit(2)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rec, err := transcript.NewRecorder(f, h)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i, p := range pairs {
		listen, upstream, ok := strings.Cut(p, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "%q: want LISTEN=UPSTREAM\n", p)
			os.Exit(2)
		}
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		go func() { _ = rec.Serve(ln, i, upstream) }()
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	<-stop
	_ = f.Close()
}
