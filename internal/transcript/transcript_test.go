package transcript

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A message with bytes that are not valid UTF-8 (Redisson's permit ids)
// comes back from the file byte for byte: JSON strings would turn them into
// U+FFFD and break the RESP lengths (the first RPermitExpirableSemaphore
// recordings could not be replayed).
func TestBinaryMessagesRoundTrip(t *testing.T) {
	send := "*2\r\n$4\r\nECHO\r\n$4\r\n\xff\x00\xfe\x1b\r\n"
	recv := "$4\r\n\xff\x00\xfe\x1b\r\n"
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(Header{Client: "c", Replicas: 1, LeaseMS: 1}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []Event{{Conn: 1, Send: send}, {Conn: 1, Recv: recv}, {Conn: 1, Send: "*1\r\n$4\r\nPING\r\n"}} {
		e.binarySafe()
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(buf.String(), `\ufffd`) {
		t.Fatalf("the file replaced bytes: %s", buf.String())
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Events; len(got) != 3 || got[0].Send != send || got[1].Recv != recv || got[2].Send != "*1\r\n$4\r\nPING\r\n" {
		t.Errorf("loaded %+v; want the messages as sent", got)
	}
}
