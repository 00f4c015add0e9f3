package proxy

import (
	"github.com/redlock-proxy/redlock-proxy/proxy/scriptbook"

	"errors"
	"fmt"
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
var ScriptMeanings = map[string]scriptbook.Kind{"release": scriptbook.Release, "extend": scriptbook.Extend, "acquire": scriptbook.Acquire}

// writeReplyValue answers v.
func writeReplyValue(c *request, v scriptbook.Reply) {
	switch {
	case v.Status:
		c.wr.WriteString("OK")
	case v.Null:
		c.writeNull()
	default:
		c.wr.WriteInt64(v.N)
	}
}

// Problem says why s cannot be registered, or "" when it can.
func (s Script) Problem() string {
	_, err := s.convention()
	if err != nil {
		return err.Error()
	}
	return ""
}

// convention checks s and reads its reply convention.
func (s Script) convention() (scriptbook.Convention, error) {
	kind, ok := ScriptMeanings[s.Meaning]
	if !ok {
		return scriptbook.Convention{}, fmt.Errorf("meaning %q: want release, extend or acquire", s.Meaning)
	}
	if sp, known := scriptbook.Book[strings.ToLower(s.SHA1)]; known {
		return scriptbook.Convention{}, fmt.Errorf("sha1 %s is a script this proxy knows already (%s): remove this entry", s.SHA1, sp.Kind)
	}
	noName, noField, other, otherField := "not_held", s.NotHeld, "taken", s.Taken
	if kind == scriptbook.Acquire {
		noName, noField, other, otherField = "taken", s.Taken, "not_held", s.NotHeld
	}
	if otherField != "" {
		return scriptbook.Convention{}, fmt.Errorf("%s does not apply to meaning %s (it answers granted or %s)", other, s.Meaning, noName)
	}
	if kind == scriptbook.Release && s.Granted == "" && noField == "" {
		return scriptbook.Convention{Yes: scriptbook.Reply{N: 1}, No: scriptbook.Reply{N: 0}}, nil // the canonical compare-and-delete's 1/0
	}
	if s.Granted == "" || noField == "" {
		return scriptbook.Convention{}, fmt.Errorf("meaning %s needs its reply convention, granted and %s: what the script answers "+
			"when it %s and when it did not (e.g. granted: OK, %s: nil; or 1 and 0); the proxy answers in it, and a client "+
			"reading a reply of another shape can take a refusal for a grant (bsm/redislock v0.10 takes any reply but nil as obtained)",
			s.Meaning, noName, map[scriptbook.Kind]string{scriptbook.Acquire: "acquired the lock", scriptbook.Extend: "extended it", scriptbook.Release: "released it"}[kind], noName)
	}
	var conv scriptbook.Convention
	var err error
	if conv.Yes, err = scriptbook.ParseReply(s.Granted); err != nil {
		return scriptbook.Convention{}, fmt.Errorf("granted: %w", err)
	}
	if conv.No, err = scriptbook.ParseReply(noField); err != nil {
		return scriptbook.Convention{}, fmt.Errorf("%s: %w", noName, err)
	}
	if conv.Yes == conv.No {
		return scriptbook.Convention{}, fmt.Errorf("granted and %s are both %s: the client could not tell them apart", noName, s.Granted)
	}
	return conv, nil
}

// register makes each registered script a spec in r: its meaning's, with the
// operator's positions and reply convention. A script with a Problem is
// left out: its calls get the unknown-script error, never a reply of a
// shape its client may misread.
func register(r *scriptbook.Registry, scripts []Script) {
	r.Custom = make(map[string]*scriptbook.Spec, len(scripts))
	for _, s := range scripts {
		conv, err := s.convention()
		if err != nil {
			continue
		}
		kind := ScriptMeanings[s.Meaning]
		sp := scriptbook.SpecFor("", kind)
		sp.Key, sp.Owner = scriptbook.Key(orDefault(s.Key, 1)), scriptbook.Arg(orDefault(s.Owner, 1))
		if kind != scriptbook.Release {
			sp.TTL = scriptbook.Arg(orDefault(s.TTL, 2))
		}
		sp.Replies = &conv
		r.Custom[strings.ToLower(s.SHA1)] = sp
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
func (s *scriptService) runRegistered(c *request, sp *scriptbook.Spec, o operands) {
	start := time.Now()
	var err error
	var no bool // the round's "no": taken or not held
	switch sp.Kind {
	case scriptbook.Acquire:
		var g quorum.Grant
		g, err = s.engine.Acquire(c.ctx, o.key, o.owner, o.ttl)
		c.track(kindAcquire, start, g, err)
		no = errors.Is(err, quorum.ErrTaken)
	case scriptbook.Extend:
		var g quorum.Grant
		g, err = s.native.extendLock(c, o.key, o.owner, o.ttl)
		c.track(kindExtend, start, g, err)
		no = errors.Is(err, quorum.ErrNotHeld) || errors.Is(err, quorum.ErrTaken)
	default:
		err = s.native.releaseLock(c.ctx, o.key, o.owner)
		s.metrics.observe(kindRelease, start, err, 0)
		no = errors.Is(err, quorum.ErrNotHeld)
	}
	switch {
	case err == nil:
		writeReplyValue(c, sp.Replies.Yes)
	case no:
		writeReplyValue(c, sp.Replies.No)
	default:
		c.writeErr(err)
	}
}
