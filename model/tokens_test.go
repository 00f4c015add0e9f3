package model

import (
	"testing"
)

// tokenConfigs are the spin runs of tokens.pml (fencing tokens); README.md,
// "Fencing tokens (tokens.pml)", gives their bounds and measured sizes.
var tokenConfigs = []config{
	// two fenced grants racing through two replicas, raises landing late
	{"tokens_base", "tokens.pml", nil, false, nil},
	// node 0 restarts empty at any moment; the grants run one after another
	{"tokens_restart", "tokens.pml", []string{"-DWITH_RESTART", "-DSEQ"}, false, nil},
	// a plain lock's first token read on both replicas at once (no later grant)
	{"tokens_fix", "tokens.pml", []string{"-DSCEN_FIX", "-DFIX_NO_GRANT"}, false, nil},
	// a token read of a fenced lock, the grants one after another
	{"tokens_read_seq", "tokens.pml", []string{"-DSCEN_READ", "-DSEQ"}, false, nil},
	// a fenced grant outbid by other keys' grants (two counter increments
	// anywhere, any time: one sets the counters apart so that the grant
	// raises, one outbids its raise), and a token read of its lock at any
	// moment
	{"tokens_read_bump", "tokens.pml", []string{"-DSCEN_READ_BUMP", "-DNBUMP=2"}, false, nil},
	{"mutant_read_tentative", "tokens.pml", []string{"-DSCEN_READ_BUMP", "-DNBUMP=2", "-DMUTANT_READ_TENTATIVE"}, true, nil},
	{"mutant_no_tentative", "tokens.pml", []string{"-DSCEN_READ_BUMP", "-DNBUMP=2", "-DMUTANT_NO_TENTATIVE"}, true, nil},
	// three grants one after another: a failed one's INCRs leave the
	// counters apart, so a grant may need its raise or not
	{"tokens_three_seq", "tokens.pml", []string{"-DSCEN_THREE", "-DSEQ"}, false, nil},
	// a grant skips its raise whenever Q intact nodes granted it, their
	// counters at the token or not
	{"mutant_one_round_any", "tokens.pml", []string{"-DSCEN_THREE", "-DSEQ", "-DMUTANT_ONE_ROUND_ANY"}, true, nil},
	{"mutant_token_one_node", "tokens.pml", []string{"-DMUTANT_TOKEN_ONE_NODE"}, true, nil},
	{"mutant_no_repair_raise", "tokens.pml", []string{"-DWITH_RESTART", "-DSEQ", "-DMUTANT_NO_REPAIR_RAISE"}, true, nil},
}

// TestTokenModel runs spin on each of tokenConfigs as TestModel does on
// configs: the unmutated runs must verify, each mutant must be caught.
func TestTokenModel(t *testing.T) {
	tools(t)
	for _, c := range tokenConfigs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			check(t, c)
		})
	}
}
