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

// register makes each registered script a spec: its meaning's, with the
// operator's positions.
func (r *scriptRegistry) register(scripts []Script) {
	r.custom = make(map[string]*spec, len(scripts))
	for _, s := range scripts {
		kind, ok := ScriptMeanings[s.Meaning]
		if !ok {
			continue
		}
		sp := specFor("", kind)
		sp.key, sp.owner = key(orDefault(s.Key, 1)), arg(orDefault(s.Owner, 1))
		if kind != scriptRelease {
			sp.ttl = arg(orDefault(s.TTL, 2))
		}
		r.custom[strings.ToLower(s.SHA1)] = sp
	}
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
