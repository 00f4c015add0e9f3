package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
	"github.com/redlock-proxy/redlock-proxy/wake"
)

// ErrServerClosed is returned by Serve after Close or Shutdown.
var ErrServerClosed = errors.New("proxy: server closed")

// New returns a server that runs lock commands on engine.
func New(engine *quorum.Engine, opts ...Option) *Server {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	id := make([]byte, 20)
	_, _ = rand.Read(id)
	s := &Server{
		engine:    engine,
		opts:      o,
		started:   time.Now(),
		runID:     hex.EncodeToString(id),
		listeners: map[net.Listener]struct{}{},
		clients:   map[*client]struct{}{},
		stopping:  make(chan struct{}),
		metrics:   o.metrics,
		bus:       o.bus,
	}
	if s.bus == nil {
		s.bus = wake.New(nil, time.Second, o.logger)
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	s.native = &lockService{engine: engine, opts: &s.opts, metrics: s.metrics, bus: s.bus, quotas: &s.quotas, leaving: &s.leaving,
		stopWaits: s.stopping}
	s.native.sessions.s = s.native
	s.native.beats.s = s.native
	s.refusals.perSec = float64(o.LimitRefusalsPerUser)
	s.metrics.server.Store(s)
	s.pubsub = &pubSub{bus: s.bus, opts: &s.opts, quotas: &s.quotas}
	s.locks = &redisLocks{engine: engine, opts: &s.opts, metrics: s.metrics, native: s.native}
	s.scripts = &scriptService{engine: engine, opts: &s.opts, metrics: s.metrics, bus: s.bus, native: s.native}
	register(&s.scripts.registry, o.scripts)
	s.hooks.hook(s.pubsub, s.native)
	s.cmds = s.commandTable()
	return s
}

// Serve accepts connections on ln until Close or Shutdown; it then returns
// ErrServerClosed.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.opts.logger.Warn("accept failed; retrying", "err", err, "backoff", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		s.accept(nc)
	}
}

func (s *Server) accept(nc net.Conn) {
	s.metrics.connections.Add(1)
	s.mu.Lock()
	if s.closing.Load() || len(s.clients) >= s.opts.MaxClients {
		closing := s.closing.Load()
		s.mu.Unlock()
		s.metrics.rejected.Add(1)
		if !closing {
			_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = nc.Write([]byte("-" + string(errMaxClients) + "\r\n"))
		}
		_ = nc.Close()
		return
	}
	c := newClient(s, nc)
	s.clients[c] = struct{}{}
	s.conns.Add(1)
	s.mu.Unlock()
	go c.serve()
}

// Serving reports whether the server accepts clients: Serve runs on a
// listener and neither Close nor Shutdown has begun.
func (s *Server) Serving() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closing.Load() && len(s.listeners) > 0
}

// stopAccepting closes every listener and closes the connections that are
// between commands. Connections running a command close once it is answered.
func (s *Server) stopAccepting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closing.Swap(true) {
		close(s.stopping) // a WAIT is not a round in flight: it ends now
	}
	for ln := range s.listeners {
		_ = ln.Close()
	}
	for c := range s.clients {
		c.closeIfIdle()
	}
}

// Shutdown stops accepting, lets commands already running finish and answer,
// then closes every connection. If ctx ends first, it closes what is left and
// returns ctx's error. Rounds cut off that way still run to their end in the
// engine (a rollback is never abandoned); only their replies are lost.
//
// Session locks (LOCK.ACQUIRE ... SESSION, and connection-bound SET NX) are
// not released: they are left to their TTL, and their holders re-attach them
// on another replica, so that a rolling upgrade loses no lock. The last line
// it logs counts the rounds finished and cut off, and the locks left.
func (s *Server) Shutdown(ctx context.Context) error {
	doneBefore := s.metrics.roundsDone.Load()
	s.leaving.Store(true)
	s.stopAccepting()
	done := make(chan struct{})
	go func() {
		s.conns.Wait()
		close(done)
	}()
	var err error
	var cut int64
	select {
	case <-done:
	case <-ctx.Done():
		cut = s.metrics.inflight.Load()
		s.closeAll()
		<-done
		err = ctx.Err()
	}
	s.native.sessions.shutdown() // after every connection left its session locks
	finished := s.metrics.roundsDone.Load() - doneBefore - cut
	attrs := []any{"rounds_finished", finished, "rounds_cut_off", cut, "session_locks_left_to_expire", s.native.sessions.left.Load()}
	if err != nil {
		s.opts.logger.Warn("shut down: the grace period ended; closed the remaining connections", append(attrs, "err", err)...)
	} else {
		s.opts.logger.Info("shut down", attrs...)
	}
	return err
}

// Close stops accepting and closes every connection at once.
func (s *Server) Close() error {
	s.stopAccepting()
	s.closeAll()
	s.conns.Wait()
	s.native.sessions.shutdown()
	return nil
}

// closeAll closes every connection and cancels what its commands wait on
// (an owner's slot, a subscription), so that Shutdown ends within its grace:
// rounds already sent finish by their own timeouts.
func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.clients {
		c.cancel()
		_ = c.nc.Close()
	}
}
