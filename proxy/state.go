package proxy

// The types every layer of the package shares: the server, a connection's
// session, an entry of the command table and the limits on what a
// connection may hold, with the few accessors that only read or book-keep
// them. Behaviour lives in the files above.

import (
	"github.com/redlock-proxy/redlock-proxy/proxy/wire"

	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"

	"github.com/redlock-proxy/redlock-proxy/quorum"
	"github.com/redlock-proxy/redlock-proxy/wake"
)

// Server speaks RESP to lock clients and turns their lock commands into
// quorum rounds. It keeps no lock state: replicas can share one set of backends.
type Server struct {
	engine  *quorum.Engine
	opts    options
	cmds    map[string]*command
	started time.Time
	runID   string
	metrics *Metrics
	bus     *wake.Bus

	pubsub   *pubSub        // the pub/sub family: every connection's subscriptions
	scripts  *scriptService // the scripts family: the script registry (scripts.go)
	locks    *redisLocks    // the Redis-style locks family (redislocks.go)
	hooks    hooks          // the families' per-connection hooks (families.go)
	native   *lockService   // the native lock service: session locks, waiters, the shared lock operations (native.go)
	quotas   quotas         // each user's patterns, session locks and waiters
	refusals refusalBudgets // each user's budget of limit refusals (refusals.go)

	stopping  chan struct{} // closed when the server stops accepting: waits end (a WAIT, a refusal's back-off)
	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	clients   map[*client]struct{}
	closing   atomic.Bool
	leaving   atomic.Bool // a graceful shutdown: session locks are left to their TTL
	conns     sync.WaitGroup
	nextID    atomic.Int64

	auth        authGuard
	panicLogged atomic.Int64 // when a panic was last logged, UnixNano
	panicsQuiet atomic.Int64 // panics not logged since
}

// client is one connection and its session state. Its commands run one
// batch at a time on its own goroutine; replies go out in order.
type client struct {
	s       *Server
	nc      net.Conn
	rd      *wire.Reader
	wr      *redcon.Writer
	ctx     context.Context
	cancel  context.CancelFunc
	id      int64
	created time.Time
	refused refusalBucket // its refusal budget where no users are configured (refusals.go)

	// The session, changed only by the serial loop and commands that run
	// alone (conn.go); commands beside others read a copy (request). The
	// books below are kept by the serial loop (admit) and those commands.
	session
	lastCmd atomic.Pointer[command]
	quit    bool
	// subscribed counts its channels and patterns, kept by the pub/sub
	// family (pubsub.go): in RESP2 a subscribed connection runs only the
	// pub/sub commands, and the idle timeout spares it.
	subscribed atomic.Int32
	authFails  int // failed AUTHs on this connection
	preAuth    int // commands before AUTH

	// pushMu is held while a batch runs and is answered, and while pushed
	// messages are written between batches.
	pushMu sync.Mutex

	// The hang-up watch while commands block (hangup.go).
	watchMu   sync.Mutex
	watchers  int
	watchDone chan struct{}

	mu     sync.Mutex // guards busy and closed against Shutdown
	busy   bool
	closed bool
}

// session is what a command may know of its connection. A request holds a
// copy taken just before the command is admitted, so commands running beside each
// other in a pipeline read it without racing and cannot change it.
type session struct {
	authed          bool
	user            *User // nil until AUTH; then who
	proto           int   // RESP version: 2, or 3 after HELLO 3
	name            string
	libName, libVer string
	db              int // SELECT's lock namespace, 0-15 (selectdb.go)
}

// command is one entry of the dispatch table.
type command struct {
	name    string
	handler func(c *request, args [][]byte)
	// arity counts the command name, as Redis does: n means exactly n
	// arguments, -n at least n.
	arity int
	flags cmdFlags
	// Where its keys are, for permissions, reserved names, databases and
	// the pipeline's order (keys.go): args[keys.first] through
	// args[keys.last] (-1: all the rest), or where keysAt finds them in the
	// arguments (EVAL's numkeys); none when both are unset.
	keys   keyRange
	keysAt func(args [][]byte) [][]byte
	// channelsAt finds the channels or patterns it names (reserved.go).
	channelsAt func(args [][]byte) [][]byte
}

type cmdFlags uint8

const (
	flagNoAuth     cmdFlags = 1 << iota // allowed before AUTH
	flagLock                            // runs a quorum round
	flagRead                            // reads by quorum
	flagSubscribed                      // allowed to a RESP2 connection while it is subscribed
	flagScriptKeys                      // its keys are a script's KEYS, put in the connection's database when the script runs
)

// concurrent: lock and read commands may run beside others of a pipeline
// (they get a copy of the session, never the connection).
func (cmd *command) concurrent() bool { return cmd.flags&(flagLock|flagRead) != 0 }

// lookup finds a command by name in any case without allocating.
func (s *Server) lookup(name []byte) *command {
	if cmd, ok := s.cmds[string(name)]; ok {
		return cmd
	}
	if len(name) > 32 {
		return nil
	}
	var buf [32]byte
	lower := buf[:len(name)]
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	return s.cmds[string(lower)]
}

func (s *Server) isClosing() bool { return s.closing.Load() }

// Clients returns the number of open client connections.
func (s *Server) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// forget drops a closed connection from the server's books.
func (s *Server) forget(c *client) {
	s.mu.Lock()
	delete(s.clients, c)
	s.mu.Unlock()
	s.conns.Done()
}
