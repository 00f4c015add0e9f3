package backend

// The RESP2 the lock path's link speaks: commands appended to one buffer per
// batch, replies read into the values go-redis would give (int64, string,
// nil, []any), a server's error reply as a *quorum.ReplyError.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// appendScript appends EVALSHA (or EVAL, with the script's text) of s over
// keys with args.
func appendScript(b []byte, s *script, eval bool, keys []key, args []arg) []byte {
	b = appendHeader(b, '*', 3+len(keys)+len(args))
	if eval {
		b = appendBulk(appendBulk(b, "EVAL"), s.src)
	} else {
		b = appendBulk(appendBulk(b, "EVALSHA"), s.sha)
	}
	b = appendInt(b, int64(len(keys)))
	for _, k := range keys {
		b = appendHeader(b, '$', len(k.prefix)+len(k.name))
		b = append(append(b, k.prefix...), k.name...)
		b = append(b, '\r', '\n')
	}
	for _, a := range args {
		if a.isInt {
			b = appendInt(b, a.n)
		} else {
			b = appendBulk(b, a.s)
		}
	}
	return b
}

// appendCommand appends a plain command.
func appendCommand(b []byte, args ...string) []byte {
	b = appendHeader(b, '*', len(args))
	for _, a := range args {
		b = appendBulk(b, a)
	}
	return b
}

func appendHeader(b []byte, kind byte, n int) []byte {
	b = append(b, kind)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulk(b []byte, s string) []byte {
	b = appendHeader(b, '$', len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendInt(b []byte, v int64) []byte {
	var digits [20]byte
	return appendBulkBytes(b, strconv.AppendInt(digits[:0], v, 10))
}

func appendBulkBytes(b, s []byte) []byte {
	b = appendHeader(b, '$', len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// errNil is a nil reply where a command answers one value: go-redis's
// redis.Nil, which replyOf reports as a server's error reply.
var errNil = &quorum.ReplyError{Msg: "redis: nil"}

// Bounds on a reply, far above what any script of ours answers: nested
// arrays, elements of one array, bytes of one string (Redis's own
// proto-max-bulk-len). A reply beyond them is a broken link, not a
// reason to allocate without limit.
const (
	maxReplyDepth = 4
	maxArrayLen   = 1 << 20
	maxBulkLen    = 512 << 20
)

// readReply reads one reply. A server error reply is returned as a
// *quorum.ReplyError (the link is fine); any other error is the link's.
func readReply(r *bufio.Reader) (any, error) {
	v, err := readValue(r, 0)
	if err == nil && v == nil {
		return nil, errNil
	}
	return v, err
}

func readValue(r *bufio.Reader, depth int) (any, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	switch line[0] {
	case '+':
		return string(line[1:]), nil
	case '-':
		return nil, &quorum.ReplyError{Msg: string(line[1:])}
	case ':':
		return parseInt(line[1:])
	case '$':
		n, err := parseInt(line[1:])
		if err != nil || n < 0 {
			return nil, err // -1: nil
		}
		if n > maxBulkLen {
			return nil, fmt.Errorf("backend: reply string of %d bytes", n)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := parseInt(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		if depth >= maxReplyDepth || n > maxArrayLen {
			return nil, fmt.Errorf("backend: reply array of %d elements at depth %d", n, depth)
		}
		out := make([]any, n)
		for i := range out {
			v, err := readValue(r, depth+1)
			if rerr, ok := err.(*quorum.ReplyError); ok {
				v, err = rerr, nil // an error inside an array is a value
			}
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("backend: unexpected reply %q", line)
}

// readLine reads one line without its CRLF.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errors.New("backend: reply line too long")
		}
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("backend: malformed reply line %q", line)
	}
	return line[:len(line)-2], nil
}

func parseInt(b []byte) (int64, error) {
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("backend: malformed number in reply: %q", b)
	}
	return n, nil
}
