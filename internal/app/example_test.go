package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/app"
)

// A lock cycle through the proxy with an unchanged go-redis client, against
// the embedded in-memory backends `go run .` starts when none are
// configured: acquire, contend, renew, release.
func Example() {
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0" // no backends: embedded ones
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

	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: ln.Addr().String()})
	defer rdb.Close()
	const unlock = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`
	const extend = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("pexpire",KEYS[1],ARGV[2]) else return 0 end`

	fmt.Println(rdb.SetArgs(ctx, "job:42", "owner-a", redis.SetArgs{Mode: "NX", TTL: 30e9}).Val())
	_, err = rdb.SetArgs(ctx, "job:42", "owner-b", redis.SetArgs{Mode: "NX", TTL: 30e9}).Result()
	fmt.Println(err == redis.Nil) // taken: exactly what one Redis answers
	fmt.Println(rdb.Eval(ctx, extend, []string{"job:42"}, "owner-a", 60000).Val())
	fmt.Println(rdb.Eval(ctx, unlock, []string{"job:42"}, "owner-b").Val())
	fmt.Println(rdb.Eval(ctx, unlock, []string{"job:42"}, "owner-a").Val())
	fmt.Println(rdb.Exists(ctx, "job:42").Val())
	// Output:
	// OK
	// true
	// 1
	// 0
	// 1
	// 0
}
