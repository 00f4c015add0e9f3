package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

// TestPipelineBeforeAuthClosesOnce: a pipeline of lock reads before AUTH
// runs its commands beside each other, but the connection's books (how many
// commands came before AUTH, whether to close) are kept once, in order: 32
// refusals, one closing reply, then the connection closes. Unknown commands
// between the reads show the order.
func TestPipelineBeforeAuthClosesOnce(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.RequirePass = "secret" })
	for _, n := range []int{40, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var send strings.Builder
			var want []string
			for i := range n {
				if i%4 == 3 {
					fmt.Fprintf(&send, "NOPE%d\r\n", i)
					want = append(want, fmt.Sprintf("-ERR unknown command 'NOPE%d', with args beginning with: ", i))
				} else {
					fmt.Fprintf(&send, "GET key%d\r\n", i)
					want = append(want, "-NOAUTH Authentication required.")
				}
			}
			want = append(want[:32], "-ERR more than 32 commands before AUTH; closing the connection")
			got := readAll(t, h.Addr, send.String())
			if len(got) != len(want) {
				t.Fatalf("%d replies, want %d: %q", len(got), len(want), got)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("reply %d = %q, want %q", i, got[i], want[i])
				}
			}
		})
	}
}

// readAll sends raw RESP and reads reply lines until the proxy closes.
func readAll(t *testing.T, addr, send string) []string {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(nc, send); err != nil {
		t.Fatal(err)
	}
	var lines []string
	r := bufio.NewReader(nc)
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			return lines
		}
		if err != nil {
			t.Fatalf("after %d replies: %v", len(lines), err)
		}
		lines = append(lines, strings.TrimRight(line, "\r\n"))
	}
}
