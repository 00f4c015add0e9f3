package proxy

import "strings"

// Script is a lock script an operator registers by SHA1: what it means and
// where its KEYS and ARGV hold the lock key, the owner value and the TTL.
// The script text itself still never reaches a backend: the proxy runs the
// meaning as quorum rounds.
type Script struct {
	SHA1    string
	Meaning string // "release" (1/0), "extend" (1/0) or "acquire" (1/0)
	Key     int    // 1-based KEYS index of the lock key; 0: 1
	Owner   int    // 1-based ARGV index of the owner value; 0: 1
	TTL     int    // 1-based ARGV index of the TTL in ms (extend, acquire); 0: 2
}

// ScriptMeanings are the meanings a registered script can have.
var ScriptMeanings = map[string]scriptKind{"release": scriptRelease, "extend": scriptExtend, "acquire": scriptAcquire}

// registered is a Script resolved for the registry.
type registered struct {
	kind            scriptKind
	key, owner, ttl int
}

func (r *scriptRegistry) register(scripts []Script) {
	r.custom = make(map[string]registered, len(scripts))
	for _, s := range scripts {
		if kind, ok := ScriptMeanings[s.Meaning]; ok {
			r.custom[strings.ToLower(s.SHA1)] = registered{kind: kind, key: orDefault(s.Key, 1), owner: orDefault(s.Owner, 1), ttl: orDefault(s.TTL, 2)}
		}
	}
}

// remap moves a registered script's key, owner and TTL to the places the
// built-in meanings read them from: KEYS[1], ARGV[1], ARGV[2].
func (g registered) remap(keys, argv [][]byte) (k, a [][]byte, ok bool) {
	if g.key > len(keys) || g.owner > len(argv) || g.kind != scriptRelease && g.ttl > len(argv) {
		return nil, nil, false
	}
	a = [][]byte{argv[g.owner-1]}
	if g.kind != scriptRelease {
		a = append(a, argv[g.ttl-1])
	}
	return [][]byte{keys[g.key-1]}, a, true
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
