package resp

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

func TestReadKeepsEachMessagesBytes(t *testing.T) {
	in := "+OK\r\n:-3\r\n$-1\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n%1\r\n+a\r\n:1\r\n>3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\n0\r\n_\r\nPING x\r\n"
	want := []string{"OK", "-3", "(nil)", `["GET", "k"]`, `["a", 1]`, `["message", "c", "0"]`, "(nil)", `["PING", "x"]`}
	r := bufio.NewReader(strings.NewReader(in))
	var raw bytes.Buffer
	for i, w := range want {
		v, err := Read(r)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if got := v.String(); got != w && got != `"`+w+`"` {
			t.Errorf("message %d = %s; want %s", i, got, w)
		}
		raw.Write(v.Raw)
	}
	if raw.String() != in {
		t.Fatalf("raw bytes %q; want the input back", raw.String())
	}
}

// FuzzRead: any input ends in a message or an error, never a panic, and a
// message's Raw is exactly the bytes it was read from.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{"+OK\r\n", "*2\r\n$1\r\na\r\n:1\r\n", "*-1\r\n", "$5\r\nab", "%1\r\n+a\r\n*1\r\n_\r\n",
		"*99999999999\r\n", "$99999999999\r\n", ">1\r\n" + strings.Repeat("*1\r\n", 100) + ":1\r\n", "x y\r\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		consumed := 0
		for {
			v, err := Read(r)
			if err != nil {
				return
			}
			if !bytes.Equal(v.Raw, in[consumed:consumed+len(v.Raw)]) {
				t.Fatalf("Raw %q is not the input at %d", v.Raw, consumed)
			}
			consumed += len(v.Raw)
		}
	})
}
