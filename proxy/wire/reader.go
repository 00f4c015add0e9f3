package wire

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/tidwall/redcon"
)

// ProtocolError is a malformed request: answered once with
// "ERR Protocol error: ...", then the connection closes.
type ProtocolError string

func (e ProtocolError) Error() string { return "Protocol error: " + string(e) }

var ErrRequestTooLarge = errors.New("request too large")

const (
	// maxHeader bounds a "*<count>" or "$<length>" line: no number the
	// limits allow needs more digits.
	maxHeader = 32
	// maxInline bounds an inline (telnet-style) command line, as Redis does.
	maxInline = 64 << 10
	// batchCommands and the reader's maxSize bound one batch, so that a
	// client that pipelines without reading waits for its replies' room.
	batchCommands = 1024
)

// Reader reads client commands, RESP arrays of bulk strings or
// inline lines, from an untrusted peer. Every byte is examined at most once
// whatever the read sizes (a command sent one byte per packet costs what it
// costs in one packet), nothing is allocated or looped over by a count or
// length the peer declares before that many bytes arrived, and no command
// may take more than maxSize bytes or maxArgs arguments.
type Reader struct {
	r       io.Reader
	maxSize int
	maxArgs int

	buf        []byte
	start, end int // unparsed bytes: buf[start:end]

	// The command being parsed, in buf from start on: offsets are relative
	// to start, so compacting the buffer keeps them valid.
	scanned int   // bytes of it parsed so far
	count   int   // declared arguments; 0 while its header is incomplete
	marks   []int // start and end of each argument so far

	err error // met after complete commands: returned once those are answered

	// pending holds bytes read off the connection while a command blocked
	// (the hang-up watch of a WAIT): fill takes them before reading more.
	pending []byte
}

// Keep holds b, read off the connection while a command blocked, for the
// next read, and says how many bytes it holds so.
func (rd *Reader) Keep(b []byte) int {
	rd.pending = append(rd.pending, b...)
	return len(rd.pending)
}

func NewReader(r io.Reader, maxSize, maxArgs int) *Reader {
	return &Reader{r: r, maxSize: maxSize, maxArgs: maxArgs, buf: make([]byte, 4096)}
}

// ReadCommands returns the commands that are complete, reading until there
// is at least one: at most batchCommands, and no more than about maxSize
// bytes of them.
func (rd *Reader) ReadCommands() ([]redcon.Command, error) {
	if err := rd.err; err != nil {
		return nil, err
	}
	for {
		var cmds []redcon.Command
		size := 0
		for len(cmds) < batchCommands && size < rd.maxSize {
			cmd, ok, err := rd.next()
			if err != nil && len(cmds) > 0 {
				rd.err = err
				return cmds, nil
			}
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			if len(cmd.Args) > 0 {
				cmds = append(cmds, cmd)
				size += len(cmd.Raw)
			}
		}
		if len(cmds) > 0 {
			return cmds, nil
		}
		if err := rd.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads more bytes, compacting or growing the buffer first; the buffer
// never grows past what one command may take.
func (rd *Reader) fill() error {
	if rd.start > 0 && rd.end == len(rd.buf) {
		rd.end = copy(rd.buf, rd.buf[rd.start:rd.end])
		rd.start = 0
	}
	if rd.end == len(rd.buf) {
		if len(rd.buf) >= rd.maxSize+maxHeader*2 {
			return ErrRequestTooLarge
		}
		grown := make([]byte, min(2*len(rd.buf), rd.maxSize+maxHeader*2))
		rd.end = copy(grown, rd.buf[rd.start:rd.end])
		rd.buf, rd.start = grown, 0
	} else if rd.start == rd.end && len(rd.buf) > 64<<10 {
		rd.buf, rd.start, rd.end = make([]byte, 4096), 0, 0 // a big command is done: give its room back
	}
	if len(rd.pending) > 0 {
		n := copy(rd.buf[rd.end:], rd.pending)
		rd.end += n
		rd.pending = rd.pending[n:]
		return nil
	}
	n, err := rd.r.Read(rd.buf[rd.end:])
	rd.end += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// next parses on from where it stopped; ok is false until a command is complete.
func (rd *Reader) next() (redcon.Command, bool, error) {
	if rd.start == rd.end {
		return redcon.Command{}, false, nil
	}
	if rd.buf[rd.start] != '*' {
		return rd.inline()
	}
	b := rd.buf[rd.start:rd.end]
	if rd.count == 0 {
		n, used, err := header(b, 0, '*', rd.maxArgs)
		if err != nil || used == 0 {
			return redcon.Command{}, false, err
		}
		if n <= 0 {
			return redcon.Command{}, false, ProtocolError("invalid multibulk length")
		}
		rd.count, rd.scanned, rd.marks = n, used, rd.marks[:0]
	}
	for len(rd.marks) < 2*rd.count {
		n, used, err := header(b, rd.scanned, '$', rd.maxSize)
		if err != nil || used == 0 {
			return redcon.Command{}, false, err
		}
		if n < 0 {
			return redcon.Command{}, false, ProtocolError("invalid bulk length")
		}
		if rd.scanned+used+n+2 > rd.maxSize+maxHeader*2 {
			return redcon.Command{}, false, ErrRequestTooLarge
		}
		end := rd.scanned + used + n
		if end+2 > len(b) {
			return redcon.Command{}, false, nil // the payload has not all arrived
		}
		if b[end] != '\r' || b[end+1] != '\n' {
			return redcon.Command{}, false, ProtocolError("invalid bulk length")
		}
		rd.marks = append(rd.marks, rd.scanned+used, end)
		rd.scanned = end + 2
	}
	raw := bytes.Clone(b[:rd.scanned])
	cmd := redcon.Command{Raw: raw, Args: make([][]byte, rd.count)}
	for i := range cmd.Args {
		cmd.Args[i] = raw[rd.marks[2*i]:rd.marks[2*i+1]:rd.marks[2*i+1]]
	}
	rd.start += rd.scanned
	rd.count, rd.scanned = 0, 0
	return cmd, true, nil
}

// header reads a "<kind><number>\r\n" line at b[at:]: the number and the
// line's length, or used 0 when the line has not all arrived.
func header(b []byte, at int, kind byte, limit int) (n, used int, err error) {
	if at >= len(b) {
		return 0, 0, nil
	}
	if b[at] != kind {
		return 0, 0, ProtocolError("expected '" + string(kind) + "', got '" + printable(b[at]) + "'")
	}
	what := "invalid bulk length"
	if kind == '*' {
		what = "invalid multibulk length"
	}
	line := b[at:min(len(b), at+maxHeader)]
	i := bytes.IndexByte(line, '\n')
	if i < 0 {
		if len(line) == maxHeader {
			return 0, 0, ProtocolError(what)
		}
		return 0, 0, nil
	}
	if i < 2 || line[i-1] != '\r' {
		return 0, 0, ProtocolError(what)
	}
	n, perr := strconv.Atoi(string(line[1 : i-1]))
	switch {
	case perr != nil:
		return 0, 0, ProtocolError(what)
	case n > limit && kind == '$':
		return 0, 0, ErrRequestTooLarge
	case n > limit:
		return 0, 0, ProtocolError("too many arguments (max_args " + strconv.Itoa(limit) + ")")
	}
	return n, i + 1, nil
}

func printable(c byte) string {
	if c < ' ' || c > '~' {
		return "\\x" + strconv.FormatUint(uint64(c), 16)
	}
	return string(c)
}
