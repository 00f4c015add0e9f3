package proxy

import "strings"

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
