package wire

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

// readAll reads every command from input through a Reader, fed in
// one piece or one byte per read, and describes what it got.
func readAll(input []byte, oneByte bool, maxSize, maxArgs int) (cmds [][][]byte, err error) {
	var r io.Reader = bytes.NewReader(input)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	rd := NewReader(r, maxSize, maxArgs)
	for {
		batch, err := rd.ReadCommands()
		for _, c := range batch {
			cmds = append(cmds, c.Args)
		}
		if err != nil {
			return cmds, err
		}
	}
}

func TestCommandReader(t *testing.T) {
	tests := []struct {
		in   string
		cmds [][]string
		err  string
	}{
		{"*1\r\n$4\r\nPING\r\n", [][]string{{"PING"}}, "EOF"},
		{"PING\r\nSET k v NX PX 10\r\n", [][]string{{"PING"}, {"SET", "k", "v", "NX", "PX", "10"}}, "EOF"},
		{"SET 'a b' \"c\\td\" x\r\n", [][]string{{"SET", "a b", "c\td", "x"}}, "EOF"},
		{"\r\n  \r\n*1\r\n$0\r\n\r\n", [][]string{{""}}, "EOF"},
		{"*1\r\n$4\r\nPING\r\n*1\r\n$x\r\n", [][]string{{"PING"}}, "Protocol error: invalid bulk length"},
		{"*9223372036854775807\r\n", nil, "Protocol error: too many arguments (max_args 64)"},
		{"*99999999999999999999999\r\n", nil, "Protocol error: invalid multibulk length"},
		{"*0\r\n", nil, "Protocol error: invalid multibulk length"},
		{"*2\r\n$4\r\nECHO\r\n$1000000\r\n", nil, "request too large"},
		{"*1\r\n+PING\r\n", nil, "Protocol error: expected '$', got '+'"},
		{"*1\r\n$4\r\nPINGxx", nil, "Protocol error: invalid bulk length"},
		{"\"unbalanced\r\n", nil, "Protocol error: unbalanced quotes in request"},
		{"*1\r\n$4\r\nPI", nil, "EOF"},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			cmds, err := readAll([]byte(tt.in), oneByte, 4096, 64)
			var got [][]string
			for _, c := range cmds {
				var args []string
				for _, a := range c {
					args = append(args, string(a))
				}
				got = append(got, args)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.cmds) || fmt.Sprint(err) != tt.err {
				t.Errorf("%q (one byte per read: %v):\n got %q %v\nwant %q %s", tt.in, oneByte, got, err, tt.cmds, tt.err)
			}
		}
	}
}

// FuzzCommandReader: whatever the bytes, the reader never panics, reads
// the same commands and error whether they come in one piece or one byte
// per read, and no command it returns exceeds the limits.
func FuzzCommandReader(f *testing.F) {
	for _, seed := range []string{"*1\r\n$4\r\nPING\r\n", "PING\r\n", "*9223372036854775807\r\n", "*2\r\n$4\r\nECHO\r\n$1000000\r\n",
		"SET 'a b' \"c\\n\" x\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*1\r\n$x\r\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		whole, errWhole := readAll(input, false, 1024, 16)
		bytewise, errBytes := readAll(input, true, 1024, 16)
		if fmt.Sprintf("%q %v", whole, errWhole) != fmt.Sprintf("%q %v", bytewise, errBytes) {
			t.Fatalf("one piece: %q %v\none byte per read: %q %v", whole, errWhole, bytewise, errBytes)
		}
		for _, c := range whole {
			size := 0
			for _, a := range c {
				size += len(a)
			}
			if len(c) > 16 || size > 1024 {
				t.Fatalf("a command of %d arguments, %d bytes passed limits of 16 and 1024", len(c), size)
			}
		}
	})
}
