package backend

// The lock path's own connection to a backend: one per Node, owned by its
// worker, carrying each batch as one write of EVALSHA commands and reading
// their replies (resp.go). go-redis keeps the rest (identity checks, scans,
// repairs, pub/sub). Measured on one acquire and release over five
// redis-servers (BenchmarkRoundRedis/engine): 382 allocations with
// go-redis's pipeline (its commands, a context and timer per batch, a
// health peek per checkout), 172 with this link, 62 once each call's keys
// and arguments went into the worker's reused buffers (encode.go), the
// socket check was made once per link and replies were read into reused
// slices; the engine's included.

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// link is one connection, with its buffers.
type link struct {
	conn net.Conn
	r    *bufio.Reader
	out  []byte // the batch being written, reused

	raw  syscall.RawConn // the socket under conn, for alive (nil: none)
	peek func(fd uintptr) bool
	open bool // peek's verdict
}

// linkFor returns the worker's link, dialling one (with the handshake and
// the identity read go-redis's OnConnect does) when there is none or the
// server closed it since the last batch (a kill or restart while no batch
// was out): the batch then goes on a fresh connection, or fails to dial
// ("connection refused"), instead of failing on the stale one. go-redis
// checks its pooled connections the same way.
func (n *Node) linkFor(deadline time.Time) (*link, error) {
	if l := n.link; l != nil {
		if l.alive() {
			return l, nil
		}
		n.dropLink()
	}
	l, err := n.dial(deadline)
	if err != nil {
		return nil, err
	}
	n.link = l
	return l, nil
}

// dropLink closes the worker's link: after a transport error its replies
// can no longer be matched to their commands.
func (n *Node) dropLink() {
	if n.link != nil {
		_ = n.link.conn.Close()
		n.link = nil
	}
}

// alive reports whether the server left an idle link open: nothing to read
// (a read now would block) means open; EOF, a reset or stray bytes mean not.
func (l *link) alive() bool {
	if l.r.Buffered() > 0 {
		return false
	}
	if l.raw == nil {
		return true // the next batch finds out
	}
	l.open = false
	err := l.raw.Read(l.peek)
	return err == nil && l.open
}

// watchSocket readies alive: the socket under the link's connection (a
// close_notify or a reset of a TLS link shows there too; a byte read there
// was unexpected anyway), and the peek it runs, both made once.
func (l *link) watchSocket() {
	conn := l.conn
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	l.raw = raw
	l.peek = func(fd uintptr) bool {
		var b [1]byte
		n, err := syscall.Read(int(fd), b[:])
		l.open = n < 0 && (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK))
		return true // never wait
	}
}

// dial connects to the backend as go-redis would with n's options: the
// network and address, TLS, AUTH, SELECT; then reads the server's identity
// for the engine's watch (a restarted server is known before any lock
// operation reaches it).
func (n *Node) dial(deadline time.Time) (*link, error) {
	o := n.opt
	d := net.Dialer{Deadline: deadline, KeepAlive: 5 * time.Minute}
	network := o.Network
	if network == "" {
		network = "tcp"
	}
	conn, err := d.Dial(network, o.Addr)
	if err != nil {
		return nil, err
	}
	if o.TLSConfig != nil {
		cfg := o.TLSConfig.Clone()
		if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
			host, _, _ := net.SplitHostPort(o.Addr)
			cfg.ServerName = host
		}
		tc := tls.Client(conn, cfg)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			_ = conn.Close()
			return nil, err
		}
		conn = tc
	}
	l := &link{conn: conn, r: bufio.NewReaderSize(conn, 16<<10)}
	l.watchSocket()
	if err := l.handshake(o, deadline); err != nil {
		_ = conn.Close()
		return nil, err
	}
	if err := n.identify(l, deadline); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return l, nil
}

// handshake authenticates and selects the database, as go-redis's
// connection set-up does for these options.
func (l *link) handshake(o *redis.Options, deadline time.Time) error {
	var cmds [][]string
	if o.Password != "" || o.Username != "" {
		if o.Username != "" {
			cmds = append(cmds, []string{"AUTH", o.Username, o.Password})
		} else {
			cmds = append(cmds, []string{"AUTH", o.Password})
		}
	}
	if o.DB != 0 {
		cmds = append(cmds, []string{"SELECT", strconv.Itoa(o.DB)})
	}
	if len(cmds) == 0 {
		return nil
	}
	vals, errs, err := l.roundTrip(deadline, cmds...)
	if err != nil {
		return err
	}
	for i, e := range errs {
		if e != nil {
			return e
		}
		if vals[i] != "OK" {
			return errors.New("backend: unexpected reply to " + cmds[i][0])
		}
	}
	return nil
}

// identify reads the server's identity as OnConnect does for go-redis's
// connections, and tells the engine's watch: a server that refuses to say
// (ACL) is used without one.
func (n *Node) identify(l *link, deadline time.Time) error {
	info, err := readInfo(context.Background(), linkInfo{l, deadline}, n.fixed.Load())
	var rerr *quorum.ReplyError
	if errors.As(err, &rerr) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading run_id on connect: %w", err)
	}
	n.watchMu.Lock()
	f := n.watch
	n.watchMu.Unlock()
	if f != nil {
		f(info)
	}
	return nil
}

// roundTrip sends plain commands in one write and reads their replies:
// each command's value or server error; err is the link's.
func (l *link) roundTrip(deadline time.Time, cmds ...[]string) (vals []any, errs []error, err error) {
	l.out = l.out[:0]
	for _, c := range cmds {
		l.out = appendCommand(l.out, c...)
	}
	if err := l.send(deadline); err != nil {
		return nil, nil, err
	}
	vals, errs = make([]any, len(cmds)), make([]error, len(cmds))
	for i := range cmds {
		v, err := readReply(l.r)
		var rerr *quorum.ReplyError
		switch {
		case errors.As(err, &rerr):
			errs[i] = rerr
		case err != nil:
			return nil, nil, err
		}
		vals[i] = v
	}
	return vals, errs, nil
}

// send writes l.out with deadline as the connection's deadline, which the
// replies are then read under too.
func (l *link) send(deadline time.Time) error {
	if err := l.conn.SetDeadline(deadline); err != nil {
		return err
	}
	_, err := l.conn.Write(l.out)
	if cap(l.out) > 1<<20 {
		l.out = nil // a huge batch's buffer is not kept
	}
	return err
}

// linkInfo is readInfo's source on a link being set up.
type linkInfo struct {
	l        *link
	deadline time.Time
}

func (li linkInfo) infoAndMarks(_ context.Context, withInfo bool) (string, []any, error) {
	marks := []string{"MGET", quorum.IntactKey, quorum.MaxTTLKey}
	cmds := [][]string{marks}
	if withInfo {
		cmds = [][]string{{"INFO", "server", "persistence"}, marks}
	}
	vals, errs, err := li.l.roundTrip(li.deadline, cmds...)
	if err != nil {
		return "", nil, err
	}
	for _, e := range errs {
		if e != nil {
			return "", nil, e
		}
	}
	text := ""
	if withInfo {
		text, _ = vals[0].(string)
	}
	m, _ := vals[len(vals)-1].([]any)
	if len(m) != 2 {
		return "", nil, errors.New("backend: unexpected reply to MGET")
	}
	return text, m, nil
}

func (li linkInfo) appendfsync(context.Context) (string, error) {
	vals, errs, err := li.l.roundTrip(li.deadline, []string{"CONFIG", "GET", "appendfsync"})
	if err != nil {
		return "", err
	}
	if errs[0] != nil {
		return "", errs[0]
	}
	kv, _ := vals[0].([]any)
	if len(kv) == 2 {
		v, _ := kv[1].(string)
		return v, nil
	}
	return "", nil
}
