package transcript

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"sync"
	"time"

	"github.com/redlock-proxy/redlock-proxy/internal/resp"
)

// Recorder relays client connections to upstream servers and writes every
// message both ways as an Event.
type Recorder struct {
	mu    sync.Mutex
	out   *json.Encoder
	start time.Time
	conns int
	live  sync.WaitGroup // relays still running
}

// NewRecorder writes the header to w, then events as they happen.
func NewRecorder(w io.Writer, h Header) (*Recorder, error) {
	r := &Recorder{out: json.NewEncoder(w), start: time.Now()}
	r.out.SetEscapeHTML(false)
	return r, r.out.Encode(h)
}

// Serve accepts on ln and relays each connection to upstream, recording it
// as going to the given replica, until ln is closed.
func (r *Recorder) Serve(ln net.Listener, replica int, upstream string) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.conns++
		id := r.conns
		r.mu.Unlock()
		r.live.Go(func() { r.relay(c, id, replica, upstream) })
	}
}

// Wait returns once every relayed connection has ended and been recorded;
// close the listeners (and the clients) first.
func (r *Recorder) Wait() { r.live.Wait() }

func (r *Recorder) relay(c net.Conn, id, replica int, upstream string) {
	defer c.Close()
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	e := Event{Conn: id, Replica: replica}
	done := make(chan struct{})
	go func() {
		r.copy(u, c, e, true)
		_ = u.Close() // the client is gone: end the upstream side too
		close(done)
	}()
	r.copy(c, u, e, false)
	_ = c.Close()
	<-done
}

// copy forwards whole messages from src to dst, recording each; a client
// closing its side is recorded too.
func (r *Recorder) copy(dst io.Writer, src io.Reader, e Event, fromClient bool) {
	br := bufio.NewReaderSize(src, 1<<16)
	for {
		v, err := resp.Read(br)
		if err != nil {
			if fromClient && err == io.EOF {
				r.record(Event{Conn: e.Conn, Replica: e.Replica, Close: true})
			}
			return
		}
		if fromClient {
			e.Send = string(v.Raw)
		} else {
			e.Recv = string(v.Raw)
		}
		// Record before forwarding, so a reply is never written ahead of
		// the request that caused it.
		r.record(e)
		if _, err := dst.Write(v.Raw); err != nil {
			return
		}
	}
}

func (r *Recorder) record(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.MS = time.Since(r.start).Milliseconds()
	e.binarySafe()
	_ = r.out.Encode(e)
}
