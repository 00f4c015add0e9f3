package scriptbook

import (
	"strings"
	"testing"
)

func TestKnownSHAs(t *testing.T) {
	// CLIENTS.md, first row, plus ShedLock's and bsm/redislock's identical releases.
	for _, sha := range []string{
		"647c65a442733a1aa440f99908d249d13b4d6c4a",
		"b70c2384248f88e6b75b9f89241a180f856ad852",
		"e9f69f2beb755be68b5e456ee2ce9aadfbc4ebf4",
		"194f3902b2dd08557818d09fc2e7682d91480e53",
		"cf0e94b2e9ffc7e04395cf88f7583fc309985910",
		"647C65A442733A1AA440F99908D249D13B4D6C4A",
		"c3f8721cbb97f72bc19e972846bd7aaf91901658", // redis-py release
	} {
		var r Registry
		if sp, ok := r.BySHA("", sha); !ok || sp.Kind != Release {
			t.Errorf("%s is not known as a release", sha)
		}
	}
}

// TestClientSHAs: the client scripts' SHA1s CLIENTS.md records are known,
// so EVALSHA from those clients works without a NOSCRIPT trip.
func TestClientSHAs(t *testing.T) {
	for sha, want := range map[string]Kind{
		"c3f8721cbb97f72bc19e972846bd7aaf91901658": Release,         // redis-py release
		"a4e8783852e6b949f9ef3a97212805108459a890": ExtendPy,        // redis-py extend
		"1cac51482acf5858da00f6d685d68f886cd6b6b2": Extend,          // redis-py reacquire
		"e950836ed1e694540c503ef9972b8de518044d3b": ReleaseMissing,  // redsync delete
		"d75bb8b5bd13532ddedd17762e772346e39b321e": Extend,          // redsync touch
		"b6b55c439e02c6f52ffb8be7ec8c0d0ac816ea79": ExtendOrAcquire, // redsync touch with SetNX
		"80a1b5f2cfccec3b7119ba7721d2127682b691a7": Obtain,          // bsm/redislock obtain
		"a7aba3bc5d6e99b3003da8b9d80a63b9f4092ecf": Extend,          // bsm/redislock refresh
		"6484da7d58920897fdc22b7f9afd1a3d47524ea8": OwnerPTTL,       // bsm/redislock pttl
		"cf0e94b2e9ffc7e04395cf88f7583fc309985910": Release,         // bsm/redislock release
		"96da70f7716f27d278a5218544df37fd8b0a5e4c": AcquireAll,      // node-redlock 5 acquire
		"aed6f382e410db8ba7926d4e5e9aab410bf2a78a": ExtendAll,       // node-redlock 5 extend
		"e4612211c9f8f51c257e26e056b0a654b3187242": ReleaseAll,      // node-redlock 5 release
		"e5a322e2634ef59a516e8ea150cb085afafee684": AcquireAll,      // node-redlock 4.2.0 acquire
		"ce46f80993d5dac20dd066eb301a4e37994bdbed": ExtendAll,       // node-redlock 4.2.0 extend
		"0f0f23b9048b36752b5be114f357ba083449f908": ReleaseAll,      // node-redlock 4.2.0 release
		"1b77b94aa78451d55dfa97e18819bfbfc596cb5b": AcquireAll,      // @sesamecare-oss/redlock acquire
		"820e9778d2b6733e9ed771e4be90ae73a95a6f3b": ExtendAll,       // @sesamecare-oss/redlock extend
		"df51f6837dcfe303d334e6abea9aeae192bab216": ReleaseAll,      // @sesamecare-oss/redlock release
	} {
		var r Registry
		if sp, ok := r.BySHA("", sha); !ok || sp.Kind != want {
			t.Errorf("%s = %v, %v; want %v", sha, sp, ok, want)
		}
	}
}

func TestRecognise(t *testing.T) {
	tests := []struct {
		text string
		want Kind // 0: not recognised
	}{
		{"if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end", Release},
		{"IF", 0},
		{"if redis.call(\"GET\", KEYS[1]) == ARGV[1] then\n\treturn redis.call(\"DEL\", KEYS[1]);\nelse\n\treturn 0;\nend\n", Release},
		{"-- release the lock\nif redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('unlink', KEYS[1]) end\nreturn 0", Release},
		{"if ARGV[1] == redis.call('get', KEYS[1]) then return redis.call('del', KEYS[1]) else return 0 end", Release},
		{"if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end", Extend},
		{"if redis.call('GET',KEYS[1])==ARGV[1] then return redis.call('PEXPIRE',KEYS[1],ARGV[2]) end return 0", Extend},
		// Not the same script: other key, lower-case keys (a nil global in Lua), other command, extra work.
		{"if redis.call('get',KEYS[2]) == ARGV[1] then return redis.call('del',KEYS[2]) else return 0 end", 0},
		{"if redis.call('get',keys[1]) == argv[1] then return redis.call('del',keys[1]) else return 0 end", 0},
		{"if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('expire',KEYS[1],ARGV[2]) else return 0 end", 0},
		{"redis.call('flushall') if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end", 0},
		{"if redis.call('get',KEYS[1]) ~= ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end", 0},
		{"return 1", 0},
		{"", 0},
	}
	for _, tt := range tests {
		var r Registry
		sha, sp, ok := r.Recognise("", tt.text)
		var kind Kind
		if ok {
			kind = sp.Kind
		}
		if ok != (tt.want != 0) || kind != tt.want {
			t.Errorf("recognise(%q) = %v, %v; want %v\nnormalised: %s", tt.text, kind, ok, tt.want, normalizeScript(tt.text))
			continue
		}
		if ok {
			if k, found := r.BySHA("", sha); !found || k.Kind != kind {
				t.Errorf("%q: its SHA1 was not remembered", tt.text)
			}
		}
	}
}

// Each tenant's cache of hand-typed variants is bounded, and one tenant
// filling or flushing its own leaves another's alone (no NOSCRIPT for it).
func TestScriptCacheIsBoundedPerTenant(t *testing.T) {
	var r Registry
	variant := func(i int) string {
		return "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end" + strings.Repeat(" ", i)
	}
	mine, _, _ := r.Recognise("a", variant(1))
	for i := range maxLoadedScripts + 10 {
		r.Recognise("b", variant(i+2))
	}
	if n := len(r.loaded["b"]); n > maxLoadedScripts {
		t.Fatalf("script cache grew to %d entries", n)
	}
	r.Flush("b")
	if _, ok := r.BySHA("a", mine); !ok {
		t.Fatalf("tenant b's flood and SCRIPT FLUSH evicted tenant a's script")
	}
	if _, ok := r.BySHA("b", mine); ok {
		t.Fatalf("tenant b sees tenant a's loaded script")
	}
}

// unlockTokens is the canonical compare-and-delete as tokens; word tokens
// need a separator between them.
var unlockTokens = []string{"if", "redis.call", "(", "'get'", ",", "KEYS[1]", ")", "==", "ARGV[1]", "then",
	"return", "redis.call", "(", "'del'", ",", "KEYS[1]", ")", "else", "return", "0", "end"}

// FuzzNormalizeScript: whatever whitespace, semicolons, comments, quote
// style and command-name case a human types between the tokens of the
// canonical unlock, it is recognised as the release script; and the
// normaliser never panics on arbitrary text.
func FuzzNormalizeScript(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7}, "if redis.call('get',KEYS[1]) == ARGV[1] then return 1 end")
	f.Add([]byte{7, 7, 7}, "--[[ comment ]] 'unterminated")
	f.Add([]byte{}, "\"\\\"")
	seps := []string{"", " ", "\t", "\n", "\r\n", " ; ", "  ", " -- note\n"}
	f.Fuzz(func(t *testing.T, choice []byte, arbitrary string) {
		_ = normalizeScript(arbitrary)

		var b strings.Builder
		for i, tok := range unlockTokens {
			if i > 0 {
				sep := ""
				if len(choice) > 0 {
					sep = seps[int(choice[i%len(choice)])%len(seps)]
				}
				if sep == "" && isWordByte(unlockTokens[i-1][len(unlockTokens[i-1])-1]) && isWordByte(tok[0]) {
					sep = " "
				}
				b.WriteString(sep)
			}
			if strings.HasPrefix(tok, "'") && len(choice) > 0 && choice[0]%2 == 1 {
				tok = `"` + strings.ToUpper(tok[1:len(tok)-1]) + `"`
			}
			b.WriteString(tok)
		}
		var r Registry
		if _, sp, ok := r.Recognise("", b.String()); !ok || sp.Kind != Release {
			t.Fatalf("not recognised as a release:\n%s\nnormalised: %s", b.String(), normalizeScript(b.String()))
		}
	})
}

// Every kind of script has a layout, a meaning and a name, so no script
// the registry resolves can reach runScript without them. A registered
// acquire has no meaning of its own: it runs only in its operator's reply
// convention (runRegistered).
func TestEveryKindHasALayoutAndAName(t *testing.T) {
	for kind := Release; kind <= BsmPTTL; kind++ {
		if _, ok := layouts[kind]; !ok {
			t.Errorf("kind %d has no layout", kind)
		}
		if kind.String() == "" {
			t.Errorf("kind %d has no name", kind)
		}
	}
}
