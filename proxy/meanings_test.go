package proxy

import (
	"testing"

	"github.com/redlock-proxy/redlock-proxy/proxy/scriptbook"
)

// Every kind of script the book knows has a meaning here (scriptcmds.go),
// but an operator's acquire, which runs its own (registered.go).
func TestEveryKindHasAMeaning(t *testing.T) {
	for kind := scriptbook.Release; kind <= scriptbook.BsmPTTL; kind++ {
		if meanings[kind] == nil && kind != scriptbook.Acquire {
			t.Errorf("kind %d (%v) has no meaning", kind, kind)
		}
	}
}
