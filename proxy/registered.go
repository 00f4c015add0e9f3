package proxy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Operator-registered scripts (Script, WithScripts). The proxy does not
// run their text, so it cannot know what the script answers: the operator
// says it, as the script's reply convention, and the proxy answers in it.
// A client reads those answers its own way (bsm/redislock v0.10 takes any
// reply but nil as "obtained"); an acquire or extend answered in a shape of
// the proxy's choosing could read as granted when it was not, so these two
// are refused without a convention (Script.Problem).

// ScriptMeanings are the meanings a registered script can have.
var ScriptMeanings = map[string]scriptKind{"release": scriptRelease, "extend": scriptExtend, "acquire": scriptAcquire}

// replyValue is one reply of a convention: +OK, a nil reply or an integer.
type replyValue struct {
	status, null bool
	n            int64
}

// parseReply reads a convention's reply as an operator writes it: OK, nil,
// an integer, or a Lua boolean (true is 1, false a nil reply).
func parseReply(s string) (replyValue, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ok", "+ok":
		return replyValue{status: true}, nil
	case "nil", "false":
		return replyValue{null: true}, nil
	case "true":
		return replyValue{n: 1}, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return replyValue{}, fmt.Errorf("%q is not a reply this proxy can give: want OK, nil, an integer, true or false", s)
	}
	return replyValue{n: n}, nil
}

func (v replyValue) write(c *request) {
	switch {
	case v.status:
		c.wr.WriteString("OK")
	case v.null:
		c.writeNull()
	default:
		c.wr.WriteInt64(v.n)
	}
}

// convention is what a registered script answers: yes when it did what its
// meaning says (granted, extended, released), no when it did not (taken,
// not held).
type convention struct{ yes, no replyValue }

// Problem says why s cannot be registered, or "" when it can.
func (s Script) Problem() string {
	_, err := s.convention()
	if err != nil {
		return err.Error()
	}
	return ""
}

// convention checks s and reads its reply convention.
func (s Script) convention() (convention, error) {
	kind, ok := ScriptMeanings[s.Meaning]
	if !ok {
		return convention{}, fmt.Errorf("meaning %q: want release, extend or acquire", s.Meaning)
	}
	if sp, known := book[strings.ToLower(s.SHA1)]; known {
		return convention{}, fmt.Errorf("sha1 %s is a script this proxy knows already (%s): remove this entry", s.SHA1, sp.kind)
	}
	noName, noField, other, otherField := "not_held", s.NotHeld, "taken", s.Taken
	if kind == scriptAcquire {
		noName, noField, other, otherField = "taken", s.Taken, "not_held", s.NotHeld
	}
	if otherField != "" {
		return convention{}, fmt.Errorf("%s does not apply to meaning %s (it answers granted or %s)", other, s.Meaning, noName)
	}
	if kind == scriptRelease && s.Granted == "" && noField == "" {
		return convention{yes: replyValue{n: 1}, no: replyValue{n: 0}}, nil // the canonical compare-and-delete's 1/0
	}
	if s.Granted == "" || noField == "" {
		return convention{}, fmt.Errorf("meaning %s needs its reply convention, granted and %s: what the script answers "+
			"when it %s and when it did not (e.g. granted: OK, %s: nil; or 1 and 0); the proxy answers in it, and a client "+
			"reading a reply of another shape can take a refusal for a grant (bsm/redislock v0.10 takes any reply but nil as obtained)",
			s.Meaning, noName, map[scriptKind]string{scriptAcquire: "acquired the lock", scriptExtend: "extended it", scriptRelease: "released it"}[kind], noName)
	}
	var conv convention
	var err error
	if conv.yes, err = parseReply(s.Granted); err != nil {
		return convention{}, fmt.Errorf("granted: %w", err)
	}
	if conv.no, err = parseReply(noField); err != nil {
		return convention{}, fmt.Errorf("%s: %w", noName, err)
	}
	if conv.yes == conv.no {
		return convention{}, fmt.Errorf("granted and %s are both %s: the client could not tell them apart", noName, s.Granted)
	}
	return conv, nil
}

// register makes each registered script a spec: its meaning's, with the
// operator's positions and reply convention. A script with a Problem is
// left out: its calls get the unknown-script error, never a reply of a
// shape its client may misread.
func (r *scriptRegistry) register(scripts []Script) {
	r.custom = make(map[string]*spec, len(scripts))
	for _, s := range scripts {
		conv, err := s.convention()
		if err != nil {
			continue
		}
		kind := ScriptMeanings[s.Meaning]
		sp := specFor("", kind)
		sp.key, sp.owner = key(orDefault(s.Key, 1)), arg(orDefault(s.Owner, 1))
		if kind != scriptRelease {
			sp.ttl = arg(orDefault(s.TTL, 2))
		}
		sp.replies = &conv
		r.custom[strings.ToLower(s.SHA1)] = sp
	}
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// runRegistered runs a registered script's meaning as one quorum round and
// answers in its convention.
func (s *Server) runRegistered(c *request, sp *spec, o operands) {
	start := time.Now()
	var err error
	var no bool // the round's "no": taken or not held
	switch sp.kind {
	case scriptAcquire:
		var g quorum.Grant
		g, err = s.engine.Acquire(c.ctx, o.key, o.owner, o.ttl)
		s.track(c, kindAcquire, start, g, err)
		no = errors.Is(err, quorum.ErrTaken)
	case scriptExtend:
		var g quorum.Grant
		g, err = s.extendLock(c, o.key, o.owner, o.ttl)
		s.track(c, kindExtend, start, g, err)
		no = errors.Is(err, quorum.ErrNotHeld) || errors.Is(err, quorum.ErrTaken)
	default:
		err = s.releaseLock(c.ctx, o.key, o.owner)
		s.metrics.observe(kindRelease, start, err, 0)
		no = errors.Is(err, quorum.ErrNotHeld)
	}
	switch {
	case err == nil:
		sp.replies.yes.write(c)
	case no:
		sp.replies.no.write(c)
	default:
		c.writeErr(err)
	}
}
