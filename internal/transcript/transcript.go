package transcript

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/redlock-proxy/redlock-proxy/internal/resp"
)

// Header says what was recorded.
type Header struct {
	Client   string `json:"client"`   // library and version, e.g. "Redisson 3.23.4"
	Scenario string `json:"scenario"` // what the client did, in a sentence
	Replicas int    `json:"replicas"` // proxy replicas it was recorded through
	// LeaseMS bounds every TTL the session asked for: a reply that is a
	// remaining TTL matches another when both are in (0, LeaseMS].
	LeaseMS int64 `json:"lease_ms"`
	// Users: the session logs in as the lab's users, "app" (all keys) and
	// "billing" (keys and channels of prefix billing:); else it sends no AUTH.
	Users bool `json:"users,omitempty"`
	// Racy: the client's threads race for one lock, so a replay may see the
	// race go another way than recorded; replies are then compared between
	// the proxy and Redis only, both given the same order.
	Racy bool `json:"racy,omitempty"`
	// Upstream is "redis" for a session recorded against one plain
	// redis-server with an empty script cache instead of the proxy: each
	// script's first EVALSHA was answered NOSCRIPT and the client then sent
	// its text, which a session through the proxy (that knows the script by
	// its SHA1) never shows. Such a session is where the repository keeps
	// those texts; it is replayed against plain redis-servers only.
	Upstream string `json:"upstream,omitempty"`
}

// Event is one whole RESP message on one connection.
type Event struct {
	Conn    int    `json:"c"`              // connection number, from 1 in order of opening
	Replica int    `json:"r"`              // which proxy replica the connection went to
	MS      int64  `json:"ms"`             // milliseconds since the recording began
	Send    string `json:"send,omitempty"` // client to server
	Recv    string `json:"recv,omitempty"` // server to client
	Close   bool   `json:"close,omitempty"`
	// Send64 and Recv64 carry a message that is not valid UTF-8 (a binary
	// argument, such as Redisson's permit ids), base64-encoded: JSON strings
	// cannot hold its bytes. Load moves them into Send and Recv.
	Send64 string `json:"send64,omitempty"`
	Recv64 string `json:"recv64,omitempty"`
}

// binarySafe moves a message that is not valid UTF-8 into its base64 field.
func (e *Event) binarySafe() {
	if !utf8.ValidString(e.Send) {
		e.Send, e.Send64 = "", base64.StdEncoding.EncodeToString([]byte(e.Send))
	}
	if !utf8.ValidString(e.Recv) {
		e.Recv, e.Recv64 = "", base64.StdEncoding.EncodeToString([]byte(e.Recv))
	}
}

// fromBase64 moves base64-encoded messages back into Send and Recv.
func (e *Event) fromBase64() error {
	for _, f := range []struct{ from, to *string }{{&e.Send64, &e.Send}, {&e.Recv64, &e.Recv}} {
		if *f.from == "" {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(*f.from)
		if err != nil {
			return err
		}
		*f.to, *f.from = string(b), ""
	}
	return nil
}

// Transcript is a loaded recording.
type Transcript struct {
	Header
	Events []Event
}

// Load reads a transcript file.
func Load(path string) (*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var t Transcript
	for n := 1; sc.Scan(); n++ {
		var err error
		if n == 1 {
			err = json.Unmarshal(sc.Bytes(), &t.Header)
		} else {
			var e Event
			if err = json.Unmarshal(sc.Bytes(), &e); err == nil {
				err = e.fromBase64()
			}
			t.Events = append(t.Events, e)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if t.Replicas < 1 || t.LeaseMS <= 0 {
		return nil, fmt.Errorf("%s: header needs replicas and lease_ms", path)
	}
	return &t, nil
}

// Script is the text of the script with SHA1 sha (lower-case hex) as the
// client sent it (EVAL or SCRIPT LOAD), if it did.
func (t *Transcript) Script(sha string) (string, bool) {
	texts, _ := t.Scripts()
	text, ok := texts[sha]
	return text, ok
}

// Scripts are the scripts the client ran: their texts by SHA1 (lower-case
// hex) where it sent them (EVAL, SCRIPT LOAD), and every SHA1 it called,
// by its text or by EVALSHA.
func (t *Transcript) Scripts() (texts map[string]string, called map[string]bool) {
	texts, called = map[string]string{}, map[string]bool{}
	for _, e := range t.Events {
		if !strings.HasPrefix(e.Send, "*") {
			continue
		}
		v, err := resp.Read(bufio.NewReader(strings.NewReader(e.Send)))
		if err != nil {
			continue
		}
		args := v.Args()
		switch {
		case len(args) > 1 && strings.EqualFold(args[0], "EVAL"):
			sha := SHA1(args[1])
			texts[sha], called[sha] = args[1], true
		case len(args) > 2 && strings.EqualFold(args[0], "SCRIPT") && strings.EqualFold(args[1], "LOAD"):
			texts[SHA1(args[2])] = args[2]
		case len(args) > 1 && strings.EqualFold(args[0], "EVALSHA"):
			called[strings.ToLower(args[1])] = true
		}
	}
	return texts, called
}

// SHA1 is the lower-case hex SHA1 of a script text, as Redis names it.
func SHA1(text string) string {
	h := sha1.Sum([]byte(text))
	return hex.EncodeToString(h[:])
}

// LoadDir reads every transcript in dir (*.jsonl), by file name without
// its extension.
func LoadDir(dir string) (map[string]*Transcript, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no transcripts in %s", dir)
	}
	out := map[string]*Transcript{}
	for _, f := range files {
		t, err := Load(f)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(filepath.Base(f), ".jsonl")] = t
	}
	return out, nil
}

// Texts are the script texts the transcripts in dir carry, by SHA1.
func Texts(dir string) (map[string]string, error) {
	all, err := LoadDir(dir)
	if err != nil {
		return nil, err
	}
	texts := map[string]string{}
	for _, t := range all {
		ts, _ := t.Scripts()
		maps.Copy(texts, ts)
	}
	return texts, nil
}
