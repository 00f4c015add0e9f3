package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// pipelineErrs sends cmds in one pipeline and returns the errors that are
// not nil (a nil reply is not an error).
func pipelineErrs(t *testing.T, c *redis.Client, cmds [][]any) []error {
	p := c.Pipeline()
	for _, args := range cmds {
		p.Do(t.Context(), args...)
	}
	cs, _ := p.Exec(t.Context())
	var errs []error
	for _, cmd := range cs {
		if err := cmd.Err(); err != nil && err != redis.Nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Session locks of one connection are bounded (default 1000): a pipeline of
// 1010 SESSION acquires gets 10 clear refusals, even run side by side.
func TestSessionLocksPerConnectionBounded(t *testing.T) {
	_, billing, _ := noisyTenants(t, nil)
	c := billing()
	var cmds [][]any
	for i := range 1010 {
		cmds = append(cmds, []any{"LOCK.ACQUIRE", fmt.Sprint("billing:s", i), "o", 3000, "SESSION"})
	}
	errs := pipelineErrs(t, c, cmds)
	if len(errs) != 10 || !strings.Contains(errs[0].Error(), "too many session locks on this connection") {
		t.Fatalf("1010 SESSION acquires on one connection: %d errors (%v); want 10 answering the per-connection limit", len(errs), errs[:min(len(errs), 3)])
	}
}

// Parked waiters of one user are bounded (default 1000) across its
// connections, and WAIT by max_wait (default 5 minutes). (One connection
// parks at most one read batch of waiters at a time, about 60 small
// commands: its own limit, 100, is not reached by a pipeline.)
func TestWaitersPerUserBounded(t *testing.T) {
	_, billing, _ := noisyTenants(t, nil)
	holder := billing()
	ctx := t.Context()
	const conns, each = 25, 42
	var held [][]any
	for i := range conns * each {
		held = append(held, []any{"LOCK.ACQUIRE", fmt.Sprint("billing:w", i), "holder", 30000})
	}
	if errs := pipelineErrs(t, holder, held); len(errs) > 0 {
		t.Fatal(errs[0])
	}
	if err := holder.Do(ctx, "LOCK.ACQUIRE", "billing:w0", "x", 30000, "WAIT", 400000).Err(); err == nil || !strings.Contains(err.Error(), "max_wait") {
		t.Errorf("WAIT 400000 = %v; want refused (max_wait)", err)
	}
	errs := make(chan []error, conns)
	for c := range conns {
		client := billing()
		go func() {
			var cmds [][]any
			for i := range each {
				cmds = append(cmds, []any{"LOCK.ACQUIRE", fmt.Sprint("billing:w", c*each+i), "w", 30000, "WAIT", 4000})
			}
			errs <- pipelineErrs(t, client, cmds)
		}()
	}
	var all []error
	for range conns {
		all = append(all, <-errs...)
	}
	if len(all) != conns*each-1000 || !strings.Contains(all[0].Error(), "too many waiters for user billing") {
		t.Fatalf("%d parked WAITs of one user: %d errors (%v); want %d answering the per-user limit", conns*each, len(all), all[:min(len(all), 3)], conns*each-1000)
	}
}
