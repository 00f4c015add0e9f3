package client_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/client"
)

// proxyAddr is where redlock-proxy listens: `go run .` in this repository
// serves 127.0.0.1:6380. (This package's tests point it at a proxy they
// start: see main_test.go.)
var proxyAddr = "127.0.0.1:6380"

// Two workers take the same lock in turn through a proxy; each grant's
// fencing token is larger than the one before.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: proxyAddr})
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
	<-lock2.Done() // a session lock's holder learns here when its session ends
	fmt.Println("session ended")
	// Output:
	// true
	// <nil>
	// true
	// <nil>
	// session ended
}
