package quorum

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed scripts/delifeq.lua
	delIfEqLua string
	//go:embed scripts/pexpireifeq.lua
	pexpireIfEqLua string
	//go:embed scripts/getpttl.lua
	getPTTLLua string

	// redis.Script sends EVALSHA and falls back to EVAL (which reloads the
	// script) when a backend answers NOSCRIPT, e.g. after it restarted.
	delIfEqScript     = redis.NewScript(delIfEqLua)
	pexpireIfEqScript = redis.NewScript(pexpireIfEqLua)
	getPTTLScript     = redis.NewScript(getPTTLLua)
)

// RedisNode is a Node backed by a go-redis client.
type RedisNode struct {
	client *redis.Client
	addr   string
}

// NewRedisNode connects to one backend. Whatever opt says, it never retries a
// command (a resent SET could land twice in one round and a silent retry hides
// a failure from the vote) and it bounds every call by the context deadline.
func NewRedisNode(opt *redis.Options) *RedisNode {
	o := *opt
	o.MaxRetries = -1
	o.ContextTimeoutEnabled = true
	o.DisableIdentity = true
	o.DialerRetries = 1 // a refused dial is a vote against, now; not five tries later
	return &RedisNode{client: redis.NewClient(&o), addr: o.Addr}
}

// Addr implements Node.
func (n *RedisNode) Addr() string { return n.addr }

// SetNX implements Node.
func (n *RedisNode) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	// Spelled out rather than client.SetNX, which would round whole seconds to EX.
	err := n.client.Do(ctx, "set", key, value, "px", ttl.Milliseconds(), "nx").Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

// DelIfEq implements Node.
func (n *RedisNode) DelIfEq(ctx context.Context, key, value string) (bool, error) {
	v, err := delIfEqScript.Run(ctx, n.client, []string{key}, value).Int64()
	return v == 1, err
}

// PExpireIfEq implements Node.
func (n *RedisNode) PExpireIfEq(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	v, err := pexpireIfEqScript.Run(ctx, n.client, []string{key}, value, ttl.Milliseconds()).Int64()
	return v == 1, err
}

// Read implements Node.
func (n *RedisNode) Read(ctx context.Context, key string) (Entry, error) {
	res, err := getPTTLScript.Run(ctx, n.client, []string{key}).Slice()
	if err != nil {
		return Entry{}, err
	}
	if len(res) != 2 {
		return Entry{}, fmt.Errorf("unexpected reply to read script: %v", res)
	}
	ttl, ok := res[1].(int64)
	if !ok {
		return Entry{}, fmt.Errorf("unexpected PTTL in read script reply: %v", res[1])
	}
	value, found := res[0].(string)
	return Entry{Found: found, Value: value, TTL: time.Duration(ttl) * time.Millisecond}, nil
}

// Del implements Node.
func (n *RedisNode) Del(ctx context.Context, key string) (bool, error) {
	v, err := n.client.Del(ctx, key).Result()
	return v == 1, err
}

// Ping implements Node.
func (n *RedisNode) Ping(ctx context.Context) error { return n.client.Ping(ctx).Err() }

// Close implements Node.
func (n *RedisNode) Close() error { return n.client.Close() }
