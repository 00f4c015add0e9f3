package wire

import (
	"bytes"
	"strconv"

	"github.com/tidwall/redcon"
)

// Inline commands: a telnet-style line, as redis-cli and a person at a
// terminal send it (Reader.next hands such a line here).

// inline parses a telnet-style line: words split by spaces, "..." and '...'
// quoting with \n \r \t \" \\ escapes in double quotes, as redis-cli sends.
func (rd *Reader) inline() (redcon.Command, bool, error) {
	b := rd.buf[rd.start:rd.end]
	from := rd.scanned
	i := bytes.IndexByte(b[from:], '\n')
	limit := min(maxInline, rd.maxSize) // max_request_size holds for inline lines too
	if i < 0 {
		if len(b) > limit {
			return redcon.Command{}, false, ProtocolError("too big inline request")
		}
		rd.scanned = len(b) // the next read scans only what is new
		return redcon.Command{}, false, nil
	}
	line := b[:from+i]
	rd.start += from + i + 1
	rd.scanned = 0
	if len(line) > limit {
		return redcon.Command{}, false, ProtocolError("too big inline request")
	}
	line = bytes.TrimSuffix(line, []byte{'\r'})
	args, err := splitInline(line)
	if err != nil {
		return redcon.Command{}, false, err
	}
	if len(args) > rd.maxArgs {
		return redcon.Command{}, false, ProtocolError("too many arguments (max_args " + strconv.Itoa(rd.maxArgs) + ")")
	}
	var w redcon.Writer
	w.WriteArray(len(args))
	for _, a := range args {
		w.WriteBulk(a)
	}
	return redcon.Command{Raw: w.Buffer(), Args: args}, true, nil
}

var errQuotes = ProtocolError("unbalanced quotes in request")

// splitInline splits an inline line into its words.
func splitInline(line []byte) ([][]byte, error) {
	var args [][]byte
	for i := 0; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			break
		}
		var word []byte
		switch q := line[i]; q {
		case '"', '\'':
			i++
			closed := false
			for i < len(line) && !closed {
				c := line[i]
				switch {
				case c == q:
					closed = true
				case c == '\\' && q == '"' && i+1 < len(line):
					i++
					word = append(word, unescape(line[i]))
				default:
					word = append(word, c)
				}
				i++
			}
			if !closed || i < len(line) && line[i] != ' ' && line[i] != '\t' {
				return nil, errQuotes
			}
			if word == nil {
				word = []byte{}
			}
		default:
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '\t' {
				j++
			}
			word = bytes.Clone(line[i:j])
			i = j
		}
		args = append(args, word)
	}
	return args, nil
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c
}
