package app

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/redlock-proxy/redlock-proxy/config"
)

// embedded is a set of in-memory Redis masters inside this process, for
// trying the proxy out with nothing installed. They are not independent:
// they live and die with the proxy.
type embedded struct {
	servers  []*miniredis.Miniredis
	backends []config.Backend
	runIDs   []string // one per server, new with every start of this process
	started  time.Time
}

func startEmbedded(n int) (*embedded, error) {
	e := &embedded{started: time.Now()}
	for range n {
		id := make([]byte, 20)
		_, _ = rand.Read(id)
		e.runIDs = append(e.runIDs, hex.EncodeToString(id))
		m := miniredis.NewMiniRedis()
		m.ClockTTL(true) // TTLs run on the wall clock, as a lock needs
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			e.close()
			return nil, fmt.Errorf("embedded backend: %w", err)
		}
		e.servers = append(e.servers, m)
		e.backends = append(e.backends, config.Backend{Addr: m.Addr()})
	}
	return e, nil
}

func (e *embedded) close() {
	if e == nil {
		return
	}
	for _, m := range e.servers {
		m.Close()
	}
}
