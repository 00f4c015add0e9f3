package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Configuration errors speak the operator's language: setting names and
// examples, never Go type names, and never a password.

var secretSettings = map[string]bool{"requirepass": true}

// shown is how a setting's value appears in an error: quoted, or hidden
// when it is a secret.
func shown(key, v string) string {
	if secretSettings[key] {
		return "(value hidden)"
	}
	return strconv.Quote(v)
}

var urlPassword = regexp.MustCompile(`(://[^:@/\s"]*):[^@\s"]*@`)

// redact hides the password of every URL in err's text
// (redis://user:secret@host becomes redis://user:xxxxx@host).
func redact(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(urlPassword.ReplaceAllString(err.Error(), "$1:xxxxx@"))
}

var (
	unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type \S+`)
	wrongType    = regexp.MustCompile("line (\\d+): cannot unmarshal !!\\w+ `([^`]*)` into (\\S+)")
)

// yamlProblem rewrites yaml.v3's messages: an unknown key with the nearest
// known one, a wrong type with what is wanted.
func yamlProblem(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
	var lines []string
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if m := unknownField.FindStringSubmatch(line); m != nil {
			line = fmt.Sprintf("line %s: unknown setting %q", m[1], m[2])
			if near := nearestKey(m[2]); near != "" {
				line += fmt.Sprintf(" (did you mean %q?)", near)
			}
		} else if m := wrongType.FindStringSubmatch(line); m != nil {
			line = fmt.Sprintf("line %s: %q is not %s", m[1], m[2], kindOf(m[3]))
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "; ")
}

func kindOf(goType string) string {
	switch goType {
	case "int", "int64":
		return "a whole number"
	case "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "time.Duration":
		return "a duration such as 250ms"
	case "[]config.Backend", "[]config.User", "[]config.Script":
		return "a list"
	}
	return "what this setting takes"
}

// yamlKeys are every key a configuration file may use.
func yamlKeys() []string {
	keys := []string{"users", "scripts", "name", "password", "prefix", "admin", "addr", "tls", "sha1", "meaning", "key", "owner", "ttl", "granted", "taken", "not_held"}
	for _, s := range settings {
		keys = append(keys, s.key)
	}
	return keys
}

// nearestKey is the known key within two edits of k, if any.
func nearestKey(k string) string { return nearest(k, yamlKeys()) }

// nearest is the word of known within two edits of k, if any.
func nearest(k string, known []string) string {
	best, bestD := "", 3
	for _, known := range known {
		if d := editDistance(k, known); d < bestD {
			best, bestD = known, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
