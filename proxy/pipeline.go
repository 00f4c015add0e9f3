package proxy

import (
	"time"

	"github.com/tidwall/redcon"
)

// maxConcurrentRounds caps the rounds one connection's pipeline runs at once.
const maxConcurrentRounds = 256

// run answers one batch of commands read together. A lone command runs in
// place. In a pipeline, lock and read commands with one key run concurrently,
// each writing to its own buffer, while commands on the same key keep their
// order; any other command (AUTH, SELECT, SCRIPT, multi-key, unknown...) is a
// barrier that runs after everything before it and before anything after
// it. Replies go out in the order the commands came.
func (c *client) run(cmds []redcon.Command, arrived time.Time) {
	if len(cmds) == 1 {
		r := c.newRequest(c.wr, arrived)
		c.s.dispatch(r, cmds[0].Args)
		r.settle()
		return
	}
	var (
		replies = make([]*request, len(cmds))
		running []chan struct{} // since the last barrier
		lastFor = map[string]chan struct{}{}
		slots   = make(chan struct{}, maxConcurrentRounds)
	)
	waitAll := func() {
		for _, done := range running {
			<-done
		}
		running = running[:0]
		clear(lastFor)
	}
	for i, cmd := range cmds {
		replies[i] = c.newRequest(redcon.NewWriter(nil), arrived)
		key, ok := c.s.concurrentKey(cmd.Args)
		if !ok {
			waitAll()
			c.s.dispatch(replies[i], cmd.Args)
			if c.quit {
				replies = replies[:i+1]
				break
			}
			continue
		}
		prev, done := lastFor[key], make(chan struct{})
		lastFor[key] = done
		running = append(running, done)
		slots <- struct{}{}
		go func(r *request, args [][]byte) {
			defer func() { <-slots; close(done) }()
			if prev != nil {
				<-prev
			}
			c.s.dispatch(r, args)
		}(replies[i], cmd.Args)
	}
	waitAll()
	for _, r := range replies {
		r.settle()
		c.wr.WriteRaw(r.wr.Buffer())
	}
}

// concurrentKey returns the one key a lock or read command touches, if it is
// one that may run beside others.
func (s *Server) concurrentKey(args [][]byte) (string, bool) {
	cmd := s.lookup(args[0])
	if cmd == nil || cmd.flags&(flagLock|flagRead) == 0 || len(args) < 2 {
		return "", false
	}
	if keys := keysOf(cmd, args); len(keys) == 1 {
		return string(keys[0]), true
	}
	return "", false
}
