package proxy

import (
	"github.com/redlock-proxy/redlock-proxy/proxy/scriptbook"

	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Every known script, called with too few or too many keys and arguments
// (0-3 keys, 0-5 arguments), answers a reply or a clear error, never an
// internal error (a Spring layout read its channel before checking there
// was one, and panicked).
func TestEveryKnownScriptWithAnyArgumentCount(t *testing.T) {
	_, addr := serve(t)
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	for sha, sp := range scriptbook.Book {
		for nk := range 4 {
			for na := range 6 {
				args := []any{"evalsha", sha, nk}
				for i := range nk {
					args = append(args, fmt.Sprint("{k}", i))
				}
				for i := range na {
					args = append(args, fmt.Sprint(100+i))
				}
				err := c.Do(t.Context(), args...).Err()
				if err != nil && strings.Contains(err.Error(), "internal error") {
					t.Errorf("%s (%v) with %d keys, %d args: %v", sha, sp.Kind, nk, na, err)
				}
			}
		}
	}
}
