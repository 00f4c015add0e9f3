package proxy

import (
	"github.com/redlock-proxy/redlock-proxy/proxy/scriptbook"

	"strings"
	"testing"
)

// sharesToken compares as bsm/redislock's obtain does on one Redis:
// GETRANGE key 0 n-1 against the first n bytes of the caller's value.
func TestSharesToken(t *testing.T) {
	for _, tc := range []struct {
		held, value string
		n           int
		want        bool
	}{
		{"tok-1first", "tok-1second", 5, true},
		{"tok-1first", "tok-2first", 5, false},
		{"tok-1first", "tok-1first", 0, false}, // no token: nothing matches
		{"tok-1first", "tok-1first", -3, false},
		{"tok", "tok", 10, true},        // both shorter than n: whole values
		{"tok", "tok-1", 10, false},     // GETRANGE "tok" against "tok-1"
		{"tok-1", "tok-1meta", 5, true}, // the held value is exactly the token
	} {
		if got := sharesToken(tc.held, tc.value, tc.n); got != tc.want {
			t.Errorf("sharesToken(%q, %q, %d) = %v; want %v", tc.held, tc.value, tc.n, got, tc.want)
		}
	}
}

// A registered script's Problem says why it is refused; registration
// leaves such scripts out, so their calls are unknown scripts.
func TestRegisteredProblems(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		s    Script
		want string
	}{
		{Script{SHA1: sha, Meaning: "acquire"}, "needs its reply convention, granted and taken"},
		{Script{SHA1: sha, Meaning: "extend", Granted: "1"}, "needs its reply convention, granted and not_held"},
		{Script{SHA1: sha, Meaning: "acquire", Granted: "true", Taken: "1"}, "could not tell them apart"},
		{Script{SHA1: sha, Meaning: "release", Granted: "1", Taken: "0"}, "taken does not apply"},
		{Script{SHA1: sha, Meaning: "steal", Granted: "1", Taken: "0"}, "want release, extend or acquire"},
		{Script{SHA1: "eb0c00d98f6f33b4262419a509002884540f30be", Meaning: "acquire", Granted: "OK", Taken: "nil"}, "knows already"},
		{Script{SHA1: sha, Meaning: "acquire", Granted: "OK", Taken: "false"}, ""},
		{Script{SHA1: sha, Meaning: "release"}, ""},
	} {
		got := tc.s.Problem()
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%+v: Problem() = %q; want %q", tc.s, got, tc.want)
		}
		var r scriptbook.Registry
		register(&r, []Script{tc.s})
		if _, ok := r.Custom[strings.ToLower(tc.s.SHA1)]; ok != (tc.want == "") {
			t.Errorf("%+v: registered = %v; want %v", tc.s, ok, tc.want == "")
		}
	}
}
