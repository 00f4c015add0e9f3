package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
)

func TestAuth(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.RequirePass = "s3cret" })
	ctx := t.Context()
	anon := h.Client()
	if err := anon.Ping(ctx).Err(); err == nil || err.Error() != "NOAUTH Authentication required." {
		t.Fatalf("PING before AUTH = %v", err)
	}
	if err := anon.Do(ctx, "auth", "wrong").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Fatalf("AUTH wrong = %v", err)
	}
	// go-redis sends HELLO 3, falls back to AUTH + RESP2 on the error.
	authed := h.Client(func(o *redis.Options) { o.Password = "s3cret" })
	if ok, err := authed.SetNX(ctx, "k", "v", time.Second).Result(); !ok || err != nil {
		t.Fatalf("acquire after AUTH = %v, %v", ok, err)
	}
	hello := h.Client()
	if err := hello.Do(ctx, "hello", "2", "auth", "default", "s3cret", "setname", "me").Err(); err != nil {
		t.Fatalf("HELLO 2 AUTH = %v", err)
	}
}

func TestMaxClients(t *testing.T) {
	h := harness.New(t, 3, func(c *config.Config) { c.MaxClients = 2 })
	for range 2 {
		nc, err := net.Dial("tcp", h.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		fmt.Fprint(nc, "PING\r\n")
		if line, _ := bufio.NewReader(nc).ReadString('\n'); line != "+PONG\r\n" {
			t.Fatalf("client within the limit got %q", line)
		}
	}
	nc, err := net.Dial("tcp", h.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if line, _ := bufio.NewReader(nc).ReadString('\n'); line != "-ERR max number of clients reached\r\n" {
		t.Fatalf("client over the limit got %q", line)
	}
}

func TestGracefulShutdown(t *testing.T) {
	const nodeTimeout = time.Second
	h := harness.New(t, 5, func(c *config.Config) { c.NodeTimeout = nodeTimeout })
	c, ctx := h.Client(), t.Context()
	idle := h.Client()
	if err := idle.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// A round that must wait out a paused backend is in flight when shutdown starts.
	for _, b := range h.Backend[1:3] {
		b.Client().Set(ctx, "lock:s", "other", time.Minute)
	}
	h.Backend[0].Pause()
	defer h.Backend[0].Resume()
	reply := make(chan error, 1)
	go func() { reply <- c.SetNX(ctx, "lock:s", "tok", 30*time.Second).Err() }()
	time.Sleep(100 * time.Millisecond)

	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := h.App.Server.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if err := <-reply; err == nil || !strings.HasPrefix(err.Error(), "NOQUORUM") {
		t.Fatalf("the in-flight round got %v; want its own NOQUORUM reply, delivered before shutdown", err)
	}
	if _, err := net.DialTimeout("tcp", h.Addr, time.Second); err == nil {
		t.Fatal("the listener still accepts after Shutdown")
	}
	if err := idle.Ping(ctx).Err(); err == nil {
		t.Fatal("an idle connection survived Shutdown")
	}
	if n := h.Holders("lock:s", "tok"); n != 0 {
		t.Fatalf("the shut-down round left its value on %d backends", n)
	}
}
