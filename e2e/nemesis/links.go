package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// links are the TCP paths from each replica to each backend: toxiproxy
// proxies run in this process (the library the fault suite already uses,
// so no toxiproxy server or HTTP API to start), one per (replica, backend)
// pair, so a stall or a drop can cut one replica off one backend alone.
type links struct {
	srv *toxiproxy.ApiServer
	p   [][]*toxiproxy.Proxy // [replica][backend]
}

func newLinks(replicas int, backends []*backend) (*links, error) {
	l := &links{srv: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())}
	for r := range replicas {
		var row []*toxiproxy.Proxy
		for i, b := range backends {
			p := toxiproxy.NewProxy(l.srv, fmt.Sprint("r", r, "-b", i), "127.0.0.1:0", b.addr)
			if err := p.Start(); err != nil {
				l.stop()
				return nil, err
			}
			row = append(row, p)
		}
		l.p = append(l.p, row)
	}
	return l, nil
}

// addrs is what replica r lists as its backends.
func (l *links) addrs(r int) []string {
	var out []string
	for _, p := range l.p[r] {
		out = append(out, p.Listen)
	}
	return out
}

// stall holds every byte on the link until heal (toxiproxy's timeout toxic
// with timeout 0: connections stay open, nothing passes).
func (l *links) stall(r, b int) error {
	return l.toxic(r, b, "stall", "timeout", "upstream", `{"timeout":0}`)
}

// drop resets every connection on the link, and each new one, until heal.
func (l *links) drop(r, b int) error {
	return l.toxic(r, b, "drop", "reset_peer", "upstream", `{"timeout":0}`)
}

func (l *links) toxic(r, b int, name, typ, stream, attrs string) error {
	js := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":%s}`, name, typ, stream, attrs)
	_, err := l.p[r][b].Toxics.AddToxicJson(strings.NewReader(js))
	return err
}

func (l *links) heal(r, b int) {
	l.p[r][b].Toxics.ResetToxics(context.Background())
}

func (l *links) stop() {
	for _, row := range l.p {
		for _, p := range row {
			p.Stop()
		}
	}
}
