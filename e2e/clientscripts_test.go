package e2e

import (
	"sync"
	"testing"

	"github.com/redlock-proxy/redlock-proxy/internal/transcript"
)

// Client scripts by SHA1. The repository keeps no copy of another project's
// script outside its recorded sessions (compat/transcripts, cmd/wirerec):
// a test that sends a client's text takes it from the recording that
// carries it (clientScript); one the real client cannot be run here to
// record (Redisson before 3.22) is sent by EVALSHA, which the proxy knows
// from the SHA1 alone (proxy/scriptbook/scriptfacts.go).
const (
	shaRLock          = "149c5a8bf18676fd99e9e6e24923bd64d9b62f94" // Redisson RLock lock 3.19+
	shaRLock312       = "dad0f8d619e548e04f21fb48d50be5034df3adae" // 3.12.3-3.18, RSpinLock's
	shaRUnlock        = "6866459238a13a701d42f4971f12d9f3a50e2442" // unlock 3.24+ (latch in KEYS[3])
	shaRUnlock322     = "778cea8aada230ae060b432fc333adaec85f2f4c" // unlock 3.22-3.23
	shaRRenew         = "8e19a1ddbdee9138df9f32a480c57addab4353d1" // watchdog up to 3.43
	shaRBatch         = "6a3d31570dc6f4b0bd32bcdc8e75667747c6f635" // batched watchdog 3.44+
	shaRForce         = "605e338249a7a1d40df83b04f7658354f883b41b" // forceUnlock 3.22+
	shaRFencedTry     = "49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45" // RFencedLock tryLock
	shaDocsUnlock     = "647c65a442733a1aa440f99908d249d13b4d6c4a" // the redis.io docs unlock (Jedis)
	shaRedisPyRelease = "c3f8721cbb97f72bc19e972846bd7aaf91901658" // redis-py Lock release
	shaSesameAcq      = "1b77b94aa78451d55dfa97e18819bfbfc596cb5b" // @sesamecare-oss/redlock acquire
	shaSesameRel      = "df51f6837dcfe303d334e6abea9aeae192bab216" // and release
	shaRedlock5Acq    = "96da70f7716f27d278a5218544df37fd8b0a5e4c" // node-redlock 5 acquire
	shaRedlock5Ext    = "aed6f382e410db8ba7926d4e5e9aab410bf2a78a" // extend
	shaRedlock5Rel    = "e4612211c9f8f51c257e26e056b0a654b3187242" // release
	shaRLock310       = "9401052d872adfd0179ef8c8e8c028512707629a" // from source only: lock 3.10.0-3.10.5
	shaRUnlock3106    = "3ffe249c16dee540ac8ab32e39bd408626b9aff7" // unlock 3.10.6-3.21
	shaRUnlock310     = "93cfc048f82624d1670a310aa0ad58918c0824a5" // unlock 3.10.0-3.10.5 (a missing lock answers 1)
	shaRForceOld      = "7e9c80b3d786b95d5d4aaf8fd73adb9775fa6fb1" // forceUnlock 3.10.6-3.21
	shaRFencedLock    = "46b5551ba403d6152a7a6eca122e08728d6c8c66" // RFencedLock lock() (recorded from 3.23.4)
)

var recordedTexts = sync.OnceValues(func() (map[string]string, error) {
	return transcript.Texts("compat/transcripts")
})

// clientScript is the text of the script with SHA1 sha as a recorded
// session carries it.
func clientScript(t testing.TB, sha string) string {
	t.Helper()
	texts, err := recordedTexts()
	if err != nil {
		t.Fatal(err)
	}
	text, ok := texts[sha]
	if !ok {
		t.Fatalf("no transcript in compat/transcripts carries the text of %s", sha)
	}
	return text
}
