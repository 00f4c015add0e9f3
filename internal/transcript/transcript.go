package transcript

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

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
}

// Event is one whole RESP message on one connection.
type Event struct {
	Conn    int    `json:"c"`              // connection number, from 1 in order of opening
	Replica int    `json:"r"`              // which proxy replica the connection went to
	MS      int64  `json:"ms"`             // milliseconds since the recording began
	Send    string `json:"send,omitempty"` // client to server
	Recv    string `json:"recv,omitempty"` // server to client
	Close   bool   `json:"close,omitempty"`
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
			err = json.Unmarshal(sc.Bytes(), &e)
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
// client sent it by EVAL in t.
func (t *Transcript) Script(sha string) (string, bool) {
	for _, e := range t.Events {
		if !strings.HasPrefix(e.Send, "*") {
			continue
		}
		v, err := resp.Read(bufio.NewReader(strings.NewReader(e.Send)))
		if err != nil {
			continue
		}
		if args := v.Args(); len(args) > 1 && strings.EqualFold(args[0], "EVAL") {
			if h := sha1.Sum([]byte(args[1])); hex.EncodeToString(h[:]) == sha {
				return args[1], true
			}
		}
	}
	return "", false
}
