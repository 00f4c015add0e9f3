package backend

import (
	"bufio"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// readReply gives the values go-redis would: integers as int64, simple and
// bulk strings as string, a nil inside an array as nil, arrays as []any; a
// top-level nil as redis.Nil's error, a server error as a *quorum.ReplyError.
func TestReadReply(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
		err  string
	}{
		{":42\r\n", int64(42), ""},
		{":-7\r\n", int64(-7), ""},
		{"+OK\r\n", "OK", ""},
		{"$3\r\nabc\r\n", "abc", ""},
		{"$0\r\n\r\n", "", ""},
		{"*3\r\n$1\r\nv\r\n:5\r\n$-1\r\n", []any{"v", int64(5), nil}, ""},
		{"*2\r\n*1\r\n:1\r\n*0\r\n", []any{[]any{int64(1)}, []any{}}, ""},
		{"$-1\r\n", nil, "redis: nil"},
		{"-NOSCRIPT No matching script\r\n", nil, "NOSCRIPT No matching script"},
		{":x\r\n", nil, "malformed number"},
		{"?\r\n", nil, "unexpected reply"},
		{"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", nil, "depth"},
		{"*2000000\r\n", nil, "elements"},
		{"$999999999999\r\n", nil, "bytes"},
		{":1\n", nil, "malformed reply line"},
	} {
		got, err := readReply(bufio.NewReader(strings.NewReader(tc.in)))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("readReply(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("readReply(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
	var rerr *quorum.ReplyError
	if _, err := readReply(bufio.NewReader(strings.NewReader("-ERR x\r\n"))); !errors.As(err, &rerr) {
		t.Errorf("a server error reply = %T; want *quorum.ReplyError (the link is fine)", err)
	}
}

// What appendScript writes is what readReply's peer, a RESP server, reads:
// here, decoded back as an array of bulk strings.
func TestAppendScript(t *testing.T) {
	s := newScript("return 1")
	b := appendScript(nil, s, false, []key{{"", "k"}, {metaP, "k"}}, []arg{str("v"), num(30000), num(-7), str("")})
	got, err := readReply(bufio.NewReader(strings.NewReader(string(b))))
	want := []any{"EVALSHA", s.sha, "2", "k", quorum.MetaKey("k"), "v", "30000", "-7", ""}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("EVALSHA written as %q, read back %#v, %v; want %#v", b, got, err, want)
	}
	b = appendScript(nil, s, true, nil, nil)
	if got, _ := readReply(bufio.NewReader(strings.NewReader(string(b)))); !reflect.DeepEqual(got, []any{"EVAL", "return 1", "0"}) {
		t.Fatalf("EVAL written as %q", b)
	}
}

// FuzzReadReply: whatever a backend sends, reading it ends in a value or
// an error, never a panic or an allocation beyond the bounds.
func FuzzReadReply(f *testing.F) {
	for _, seed := range []string{":1\r\n", "$3\r\nabc\r\n", "*2\r\n+OK\r\n$-1\r\n", "-ERR x\r\n", "*-1\r\n", "$-1\r\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := bufio.NewReader(strings.NewReader(in))
		for range 8 {
			if _, err := readReply(r); err != nil {
				var rerr *quorum.ReplyError
				if !errors.As(err, &rerr) {
					return
				}
			}
		}
	})
}
