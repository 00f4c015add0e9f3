package scriptbook

// Hand-typed variants of the canonical compare-and-delete and
// compare-and-PEXPIRE scripts, recognised by their normalised text.

import "strings"

// canonicalForms maps the normalised text of every accepted shape of the
// canonical compare-and-delete and compare-and-PEXPIRE to its meaning.
var canonicalForms = func() map[string]Kind {
	forms := map[string]Kind{}
	conds := []string{`redis.call("get",KEYS[1]) == ARGV[1]`, `ARGV[1] == redis.call("get",KEYS[1])`}
	actions := map[string]Kind{
		`redis.call("del",KEYS[1])`:             Release,
		`redis.call("unlink",KEYS[1])`:          Release,
		`redis.call("pexpire",KEYS[1],ARGV[2])`: Extend,
	}
	for _, cond := range conds {
		for action, kind := range actions {
			forms[normalizeScript("if "+cond+" then return "+action+" else return 0 end")] = kind
			forms[normalizeScript("if "+cond+" then return "+action+" end return 0")] = kind
		}
	}
	return forms
}()

// normalizeScript reduces a Lua text to a form in which hand-typed variants
// of one script compare equal: comments and ';' dropped, whitespace kept only
// where it separates two words, every string literal double-quoted and
// lower-cased (in these scripts string literals are command names). Names
// outside strings keep their case: KEYS and keys differ in Lua.
func normalizeScript(src string) string {
	var b strings.Builder
	b.Grow(len(src))
	space := false // whitespace seen since the last byte written
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			space = true
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			end := min(j, len(src))
			b.WriteByte('"')
			b.WriteString(strings.ToLower(src[i+1 : end]))
			b.WriteByte('"')
			i, space = end, false
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			space = true
		case c == ';':
			space = true
		default:
			if space && b.Len() > 0 && isWordByte(lastByte(&b)) && isWordByte(c) {
				b.WriteByte(' ')
			}
			b.WriteByte(c)
			space = false
		}
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func lastByte(b *strings.Builder) byte {
	s := b.String()
	return s[len(s)-1]
}
