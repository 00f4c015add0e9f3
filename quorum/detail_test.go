package quorum

import (
	"strings"
	"testing"

	"github.com/hashicorp/go-multierror"
)

// The bootstrap hint in a NOQUORUM reply follows the nodes' typed
// quarantine errors, not their text (issue 30, item 5).
func TestDetailHintsBootstrapForYoungNodesOnly(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		hint bool
	}{
		{"young", &QuarantineError{Why: "quarantined for 9s more: it started 1s ago", Young: true}, true},
		{"restarted, with the window named in its text", &QuarantineError{Why: "quarantined: restarted within the quarantine window"}, false},
		{"another error with the same words", errString("within the quarantine window"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := multierror.Append(nil, &NodeError{Addr: "n0", Err: tc.err})
			errs.ErrorFormat = oneLine
			d := (&RoundError{Op: RoundAcquire, Votes: 2, Nodes: 5, Quorum: 3, NodeErrs: errs}).Detail()
			if got := strings.Contains(d, "redlock-proxy bootstrap"); got != tc.hint {
				t.Errorf("Detail() = %q: bootstrap hint %v, want %v", d, got, tc.hint)
			}
		})
	}
}
