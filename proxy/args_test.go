package proxy

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func args(words ...string) [][]byte {
	out := make([][]byte, len(words))
	for i, w := range words {
		out[i] = []byte(w)
	}
	return out
}

func TestParseSet(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	tests := []struct {
		words []string
		want  setArgs
		err   error
	}{
		{[]string{"k", "v", "NX", "PX", "30000"}, setArgs{Key: "k", Value: "v", NX: true, TTL: 30 * time.Second, HasTTL: true, expireOpt: "PX"}, nil},
		{[]string{"k", "v", "px", "30000", "nx"}, setArgs{Key: "k", Value: "v", NX: true, TTL: 30 * time.Second, HasTTL: true, expireOpt: "px"}, nil},
		{[]string{"k", "v", "ex", "8", "nx"}, setArgs{Key: "k", Value: "v", NX: true, TTL: 8 * time.Second, HasTTL: true, expireOpt: "ex"}, nil},
		{[]string{"k", "v", "NX", "PXAT", "1700000005000"}, setArgs{Key: "k", Value: "v", NX: true, TTL: 5 * time.Second, HasTTL: true, expireOpt: "PXAT"}, nil},
		{[]string{"k", "v", "NX", "EXAT", "1700000010"}, setArgs{Key: "k", Value: "v", NX: true, TTL: 10 * time.Second, HasTTL: true, expireOpt: "EXAT"}, nil},
		{[]string{"k", "v", "NX"}, setArgs{Key: "k", Value: "v", NX: true}, nil},
		{[]string{"k", "v", "NX", "NX", "PX", "1"}, setArgs{Key: "k", Value: "v", NX: true, TTL: time.Millisecond, HasTTL: true, expireOpt: "PX"}, nil},
		{[]string{"k", "v", "XX", "KEEPTTL", "GET"}, setArgs{Key: "k", Value: "v", XX: true, KeepTTL: true, Get: true, expireOpt: "keepttl"}, nil},
		{[]string{"k", "v", "IFEQ", "v", "PX", "100"}, setArgs{Key: "k", Value: "v", IfEq: "v", HasIfEq: true, TTL: 100 * time.Millisecond, HasTTL: true, expireOpt: "PX"}, nil},
		{[]string{"k", "v", "NX", "IFEQ", "v"}, setArgs{}, errSyntax},
		{[]string{"k", "v", "IFEQ"}, setArgs{}, errSyntax},
		{[]string{"k", "v", "NX", "XX"}, setArgs{}, errSyntax},
		{[]string{"k", "v", "PX"}, setArgs{}, errSyntax},
		{[]string{"k", "v", "PX", "1", "EX", "1"}, setArgs{}, errSyntax},
		{[]string{"k", "v", "KEEPTTL", "PX", "1"}, setArgs{}, errSyntax},
		{[]string{"k", "v", "NX", "PX", "1", "extra"}, setArgs{}, errSyntax},
		{[]string{"k", "v", "PX", "x"}, setArgs{}, errNotInteger},
		{[]string{"k", "v", "PX", "1.5"}, setArgs{}, errNotInteger},
		{[]string{"k", "v", "PX", "0"}, setArgs{}, errInvalidExpire("set")},
		{[]string{"k", "v", "EX", "-1"}, setArgs{}, errInvalidExpire("set")},
		{[]string{"k", "v", "EX", "9223372036854776"}, setArgs{}, errInvalidExpire("set")},
		{[]string{"k", "v", "PX", "9223372036854775807"}, setArgs{}, errInvalidExpire("set")},
		{[]string{"k", "v", "PXAT", "1699999999999"}, setArgs{}, errInvalidExpire("set")},
		{[]string{"k"}, setArgs{}, errWrongArity("set")},
	}
	for _, tt := range tests {
		got, err := parseSet(args(tt.words...), now)
		if !errors.Is(err, tt.err) || err == nil && got != tt.want {
			t.Errorf("parseSet(%q) = %+v, %v; want %+v, %v", tt.words, got, err, tt.want, tt.err)
		}
	}
}

// FuzzParseSet: any argument list parses or fails with a Redis error reply,
// never panics, and what parses is consistent.
func FuzzParseSet(f *testing.F) {
	for _, seed := range []string{
		"k v NX PX 30000", "k v px 100 nx", "k v ex 8 nx", "k v NX EXAT 1700000010", "k v NX PXAT 99999999999999",
		"k v XX KEEPTTL GET", "k v NX XX", "k v PX", "k v PX -1", "k v EX 9223372036854775807", "k v", "k",
	} {
		f.Add(seed)
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, line string) {
		words := bytes.Fields([]byte(line))
		s, err := parseSet(words, now)
		if err != nil {
			var re respError
			if !errors.As(err, &re) || len(re) < 4 || re[:4] != "ERR " {
				t.Fatalf("parseSet(%q) error %q is not a Redis error reply", line, err)
			}
			return
		}
		if s.NX && s.XX || s.HasTTL && s.TTL <= 0 || s.HasTTL && s.KeepTTL {
			t.Fatalf("parseSet(%q) = %+v: inconsistent", line, s)
		}
	})
}
