package wake

import (
	"strings"
	"testing"

	"github.com/tidwall/match"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, channel string
		want             bool
	}{
		{"*", "anything", true}, {"*", "", true}, {"a*", "abc", true}, {"a*", "bac", false},
		{"registry-channel:*", "registry-channel:lock1", true}, {"h?llo", "hello", true}, {"h?llo", "hllo", false},
		{"h[ae]llo", "hallo", true}, {"h[ae]llo", "hillo", false}, {"h[^e]llo", "hallo", true}, {"h[^e]llo", "hello", false},
		{"h[a-c]llo", "hbllo", true}, {"h[a-c]llo", "hdllo", false}, {`h\*llo`, "h*llo", true}, {`h\*llo`, "hallo", false},
		{"*a*b*c", "xxaxxbxxc", true}, {"*a*b*c", "xxaxxbxx", false}, {"a*b*", "ab", true}, {"h[ab", "ha", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.channel); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.channel, got, tt.want)
		}
	}
}

// The pattern shape that made Redis spend seconds matching one PUBLISH.
func TestMatchHasNoExponentialCase(t *testing.T) {
	pattern := strings.Repeat("*a", 120) + "*z"
	channel := strings.Repeat("a", 1024)
	if Match(pattern, channel) {
		t.Fatal("matched")
	}
}

// FuzzMatch compares with tidwall/match on short ASCII inputs, where
// backtracking is cheap for both (tidwall/match works on runes; Redis, and
// Match, on bytes).
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"*", "a"}, {"a*b?c", "axxbyc"}, {"[a-c]*", "bcd"}, {`\*`, "*"}, {"h[^e]llo", "hallo"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, channel string) {
		if len(pattern) > 12 || len(channel) > 24 || strings.ContainsAny(pattern, "[]\\") || !ascii(pattern) || !ascii(channel) {
			return // classes and escapes: edge cases where the two differ on malformed input
		}
		if got, want := Match(pattern, channel), match.Match(channel, pattern); got != want {
			t.Fatalf("Match(%q, %q) = %v, tidwall/match says %v", pattern, channel, got, want)
		}
	})
}

func ascii(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
