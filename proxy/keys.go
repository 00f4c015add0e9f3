package proxy

import "strconv"

// keyRange is where a command's keys sit: args[first], through args[last]
// (-1: all the rest). Commands not listed take no key, or say where their
// keys are in their arguments (keysOf).
type keyRange struct{ first, last int }

var keyRanges = map[string]keyRange{
	"set": {1, 1}, "get": {1, 1}, "pttl": {1, 1}, "ttl": {1, 1}, "delex": {1, 1}, "delifeq": {1, 1},
	"exists": {1, -1}, "del": {1, -1}, "unlink": {1, -1}, "hexists": {1, 1}, "hget": {1, 1},
	"lock.acquire": {1, 1}, "lock.extend": {1, 1}, "lock.release": {1, 1}, "lock.token": {1, 1},
}

// keySpec is a command's first and last key position, as COMMAND reports it.
func keySpec(name string) (first, last int) {
	r := keyRanges[name]
	return r.first, r.last
}

// keysOf lists the keys a command touches: for ACL prefixes and to order a
// pipeline's rounds. It takes any argument list, arity not yet checked: the
// pipeline scheduler asks before dispatch does.
func keysOf(cmd *command, args [][]byte) [][]byte {
	if r, ok := keyRanges[cmd.name]; ok {
		switch {
		case len(args) <= r.first:
			return nil
		case r.last < 0:
			return args[r.first:]
		}
		return args[r.first:min(r.last+1, len(args))]
	}
	switch cmd.name {
	case "eval", "evalsha":
		if len(args) < 3 {
			return nil
		}
		if n, err := strconv.Atoi(string(args[2])); err == nil && n >= 0 && n <= len(args)-3 {
			return args[3 : 3+n]
		}
	case "redlock":
		if len(args) >= 3 && equalFold(args[1], "forceunlock") {
			return args[2:3]
		}
	}
	return nil
}
