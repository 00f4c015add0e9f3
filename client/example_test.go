package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/client"
	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/app"
)

// Two workers take the same lock in turn against the embedded mode; each
// grant's fencing token is larger than the one before.
func Example() {
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0" // no backends: embedded ones, as `go run .` starts
	// Waits for a backend longer than the production defaults: this example
	// also runs as a test, under the race detector on busy machines.
	cfg.NodeTimeout, cfg.TimeoutFactor = 2*time.Second, 0.5
	a, err := app.Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		panic(err)
	}
	defer a.Close()
	ln, err := app.Listen(cfg)
	if err != nil {
		panic(err)
	}
	go func() { _ = a.Server.Serve(ln) }()
	rdb := redis.NewClient(&redis.Options{Addr: ln.Addr().String()})
	defer rdb.Close()

	ctx := context.Background()
	c := client.New(rdb)
	lock, err := c.Obtain(ctx, "report", 30*time.Second, client.WithOwner("worker-1"))
	if err != nil {
		panic(err)
	}
	first := lock.Token()
	_, err = c.Obtain(ctx, "report", 30*time.Second, client.WithOwner("worker-2"))
	fmt.Println(errors.Is(err, client.ErrNotObtained))
	// Worker 2 waits its turn (in the lock's fair queue) while worker 1
	// finishes, with a session lock: held while its connection is open.
	time.AfterFunc(100*time.Millisecond, func() { fmt.Println(lock.Release(ctx)) })
	lock2, err := c.Obtain(ctx, "report", 3*time.Second, client.WithOwner("worker-2"),
		client.WithWait(10*time.Second), client.WithSession())
	if err != nil {
		panic(err)
	}
	fmt.Println(lock2.Token() > first)
	fmt.Println(lock2.Release(ctx))
	// Output:
	// true
	// <nil>
	// true
	// <nil>
}
