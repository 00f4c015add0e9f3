package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Value is one RESP message.
type Value struct {
	Kind  byte    // the type byte: + - : $ * _ , # ! = ( % ~ > |
	Str   string  // simple strings, errors, bulk and verbatim strings, doubles, big numbers
	Int   int64   // integers
	Null  bool    // RESP2 null bulk or array, RESP3 null
	Elems []Value // arrays, sets, pushes; maps and attributes as key, value, key, value
	Raw   []byte  // the message's exact bytes
}

// limits for a test tool: no real client sends more.
const (
	maxBulk  = 64 << 20
	maxElems = 1 << 20
	maxDepth = 64
)

// Read returns the next whole message; an inline command (a line without a
// type byte, as telnet sends) is read as an array of its words.
func Read(r *bufio.Reader) (Value, error) {
	var raw bytes.Buffer
	v, err := read(r, &raw, 0)
	if err != nil {
		return Value{}, err
	}
	v.Raw = raw.Bytes()
	return v, nil
}

func read(r *bufio.Reader, raw *bytes.Buffer, depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, errors.New("resp: nested too deep")
	}
	line, err := r.ReadSlice('\n')
	if err != nil {
		return Value{}, err
	}
	raw.Write(line)
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return Value{}, fmt.Errorf("resp: bad line %q", line)
	}
	kind, body := line[0], string(line[1:len(line)-2])
	v := Value{Kind: kind}
	switch kind {
	case '+', '-', ',', '(', '#':
		v.Str = body
	case ':':
		v.Int, err = strconv.ParseInt(body, 10, 64)
	case '_':
		v.Null = true
	case '$', '!', '=':
		var n int
		switch n, err = count(body, 1, maxBulk); {
		case err != nil:
		case n == -1:
			v.Null = true
		default:
			buf := make([]byte, n+2)
			if _, err = io.ReadFull(r, buf); err == nil {
				raw.Write(buf)
				v.Str = string(buf[:n])
			}
		}
	case '*', '~', '>', '%', '|':
		per := 1
		if kind == '%' || kind == '|' {
			per = 2 // a map's or an attribute's pairs
		}
		var n int
		switch n, err = count(body, per, maxElems); {
		case err != nil:
		case n == -1:
			v.Null = true
		default:
			v.Elems = make([]Value, 0, n)
			for range n {
				e, eerr := read(r, raw, depth+1)
				if eerr != nil {
					return Value{}, eerr
				}
				v.Elems = append(v.Elems, e)
			}
		}
	default:
		v.Kind = '*'
		for _, w := range bytes.Fields(line) {
			v.Elems = append(v.Elems, Value{Kind: '$', Str: string(w)})
		}
	}
	return v, err
}

// count reads a length or element count (times per), -1 for null, at most limit.
func count(body string, per, limit int) (int, error) {
	n, err := strconv.Atoi(body)
	if err != nil || n < -1 || n > limit/per {
		return 0, fmt.Errorf("resp: bad length or count %q", body)
	}
	if n == -1 {
		return -1, nil
	}
	return n * per, nil
}

// Args is a command's arguments as strings (nil when v is not an array).
func (v Value) Args() []string {
	if v.Kind != '*' {
		return nil
	}
	args := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		args[i] = e.Str
	}
	return args
}

// String is the value in one readable line, for test failures.
func (v Value) String() string {
	switch {
	case v.Null:
		return "(nil)"
	case v.Kind == ':':
		return strconv.FormatInt(v.Int, 10)
	case v.Kind == '-':
		return "(error) " + v.Str
	case v.Elems != nil || v.Kind == '*' || v.Kind == '~' || v.Kind == '>' || v.Kind == '%':
		var b bytes.Buffer
		b.WriteByte('[')
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.String())
		}
		b.WriteByte(']')
		return b.String()
	default:
		return strconv.Quote(v.Str)
	}
}
