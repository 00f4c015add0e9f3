package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/internal/history"
)

// plain: SET NX PX (after an unknown answer, sometimes the same SET again
// through another replica, as a client's retry), maybe LOCK.TOKEN through
// every replica at once, maybe an extend script, then the unlock script
// (or, sometimes, let the lock expire).
func (c *client) plain(key, owner string, r int, ttl time.Duration) {
	if len(c.w.keys) > 1 && c.rng.IntN(5) == 0 {
		c.pipelined(key, owner, r, ttl)
		return
	}
	// An impatient client gives up on an answer after 50-400 ms and sends
	// the same SET through the other replica while the first round may
	// still be running (the second review's retry against a rollback).
	patience := time.Duration(0)
	if c.rng.IntN(3) == 0 {
		patience = time.Duration(50+c.rng.IntN(350)) * time.Millisecond
	}
	acquire := func(r int) history.Outcome {
		out, _ := c.record(history.Op{Key: key, Kind: history.Acquire, Owner: owner, TTL: ttl, Delay: c.w.libDelay}, r, func(ctx context.Context) (history.Outcome, int64, error) {
			if patience > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, patience)
				defer cancel()
			}
			ok, err := c.cs[r].SetNX(ctx, key, owner, ttl).Result()
			if err == nil && !ok {
				return history.Taken, 0, nil
			}
			return history.OK, 0, err
		})
		return out
	}
	out := acquire(r)
	if out == history.Unknown && (patience > 0 || c.rng.IntN(2) == 0) {
		patience = 0
		out = acquire((r + 1) % len(c.cs))
	}
	if out == history.Taken {
		return
	}
	if out == history.OK && c.rng.IntN(3) == 0 {
		c.tokenReads(key, owner)
	}
	c.sleep(c.holdFor(ttl) / 2)
	if c.rng.IntN(3) == 0 {
		ext := time.Duration(300+c.rng.IntN(2700)) * time.Millisecond
		c.record(history.Op{Key: key, Kind: history.Extend, Owner: owner, TTL: ext}, r, func(ctx context.Context) (history.Outcome, int64, error) {
			return intReply(c.cs[r].Eval(ctx, extendScript, []string{key}, owner, ext.Milliseconds()).Int64())
		})
	}
	c.sleep(c.holdFor(ttl) / 2)
	if c.rng.IntN(10) == 0 {
		return // let it expire
	}
	c.record(history.Op{Key: key, Kind: history.Release, Owner: owner}, r, func(ctx context.Context) (history.Outcome, int64, error) {
		return intReply(c.cs[r].Eval(ctx, unlockScript, []string{key}, owner).Int64())
	})
}

// pipelined sends two SET NX PX (this key and the next, two owners) in one
// pipeline, as a client batching its acquires does: each answer must be
// within its own window however long its neighbour's round took. Both are
// recorded with the pipeline's send and read times, then released.
func (c *client) pipelined(key, owner string, r int, ttl time.Duration) {
	keys := []string{key, c.w.keys[(slices.Index(c.w.keys, key)+1)%len(c.w.keys)]}
	owners := []string{owner + "a", owner + "b"}
	var dones []func(history.Outcome, int64, error)
	for i := range keys {
		dones = append(dones, c.w.rec.Begin(history.Op{Client: c.name, Via: c.w.addrs[r], Key: keys[i], Kind: history.Acquire, Owner: owners[i], TTL: ttl, Delay: c.w.libDelay}))
	}
	pipe := c.cs[r].Pipeline()
	cmds := []*redis.BoolCmd{pipe.SetNX(context.Background(), keys[0], owners[0], ttl), pipe.SetNX(context.Background(), keys[1], owners[1], ttl)}
	_, _ = pipe.Exec(context.Background())
	var got []bool
	for i, cmd := range cmds {
		ok, err := cmd.Result()
		out := history.OK
		switch {
		case err != nil:
			out = history.Unknown
		case !ok:
			out = history.Taken
		}
		dones[i](out, 0, err)
		got = append(got, out != history.Taken)
	}
	c.sleep(c.holdFor(ttl))
	for i := range keys {
		if got[i] {
			c.record(history.Op{Key: keys[i], Kind: history.Release, Owner: owners[i]}, r, func(ctx context.Context) (history.Outcome, int64, error) {
				return intReply(c.cs[r].Eval(ctx, unlockScript, []string{keys[i]}, owners[i]).Int64())
			})
		}
	}
}

// lockReply maps a Redisson lock script's reply: nil granted, a PTTL held
// by another.
func lockReply(pttl int64, err error) (history.Outcome, int64, error) {
	switch {
	case errors.Is(err, redis.Nil):
		return history.OK, 0, nil
	case err == nil && pttl >= 0:
		return history.Taken, 0, nil
	case err == nil:
		return history.Unknown, 0, fmt.Errorf("pttl %d", pttl)
	}
	return history.Unknown, 0, err
}

// redisson: the hash lock script (nil: granted; a PTTL: held by another),
// maybe the renewal script, then the unlock script, which publishes.
func (c *client) redisson(key, owner string, r int, ttl time.Duration) {
	owner = "8a5c7bd2-9d3e-4c3f-a7c0-" + owner + ":1" // Redisson's <uuid>:<threadId>
	out, _ := c.record(history.Op{Key: key, Kind: history.Acquire, Owner: owner, TTL: ttl, Delay: c.w.libDelay}, r, func(ctx context.Context) (history.Outcome, int64, error) {
		return lockReply(c.cs[r].Eval(ctx, c.w.scripts.lock, []string{key}, ttl.Milliseconds(), owner).Int64())
	})
	if out == history.Taken {
		return
	}
	c.sleep(c.holdFor(ttl) / 2)
	if c.rng.IntN(3) == 0 {
		c.record(history.Op{Key: key, Kind: history.Extend, Owner: owner, TTL: ttl}, r, func(ctx context.Context) (history.Outcome, int64, error) {
			return intReply(c.cs[r].Eval(ctx, c.w.scripts.renew, []string{key}, ttl.Milliseconds(), owner).Int64())
		})
	}
	c.sleep(c.holdFor(ttl) / 2)
	latch := fmt.Sprintf("redisson_unlock_latch:{%s}:%s", strings.Trim(key, "{}"), owner)
	c.record(history.Op{Key: key, Kind: history.Release, Owner: owner}, r, func(ctx context.Context) (history.Outcome, int64, error) {
		n, err := c.cs[r].Eval(ctx, c.w.scripts.unlock, []string{key, "redisson_lock__channel:" + key, latch},
			0, ttl.Milliseconds(), owner, "publish", 10000).Int64()
		if errors.Is(err, redis.Nil) {
			return history.NotHeld, 0, nil
		}
		return intReply(min(n, 1), err) // 0: a re-entrant hold count went down (not sent here)
	})
}

// native: LOCK.ACQUIRE, sometimes with WAIT, sometimes with SESSION on a
// connection of its own (renewed by the proxy while it is open; the holder
// checks with LOCK.TOKEN); maybe LOCK.EXTEND; then LOCK.RELEASE.
func (c *client) native(key, owner string, r int, ttl time.Duration) {
	args := []any{"LOCK.ACQUIRE", key, owner, ttl.Milliseconds()}
	if c.rng.IntN(3) == 0 {
		args = append(args, "WAIT", 100+c.rng.IntN(1400))
	}
	session := c.rng.IntN(3) == 0
	if session {
		ttl = max(ttl, 1500*time.Millisecond) // three renewal ticks of the default session_tick
		args[3] = ttl.Milliseconds()
	}
	var conn interface {
		Do(context.Context, ...any) *redis.Cmd
	} = c.cs[r]
	if session {
		args = append(args, "SESSION")
		sc := c.cs[r].Conn()
		defer sc.Close()
		conn = sc
	}
	out, tok := c.record(history.Op{Key: key, Kind: history.Acquire, Owner: owner, TTL: ttl, Delay: c.w.delay}, r, func(ctx context.Context) (history.Outcome, int64, error) {
		return tokenReply(history.Taken)(conn.Do(ctx, args...).Int64())
	})
	if out == history.Taken {
		return
	}
	hold := c.holdFor(ttl)
	if session {
		hold = 2 * hold // the proxy renews it
	}
	for end := time.Now().Add(hold); time.Now().Before(end) && !c.stopped(); {
		c.sleep(min(time.Until(end), ttl/3))
		rr := c.rng.IntN(len(c.cs))
		switch {
		case tok != 0 && c.rng.IntN(2) == 0:
			c.record(history.Op{Key: key, Kind: history.Token, Owner: owner}, rr, func(ctx context.Context) (history.Outcome, int64, error) {
				return tokenReply(history.NotHeld)(c.cs[rr].Do(ctx, "LOCK.TOKEN", key, owner).Int64())
			})
		case !session && c.rng.IntN(3) == 0:
			ext := time.Duration(300+c.rng.IntN(2700)) * time.Millisecond
			c.record(history.Op{Key: key, Kind: history.Extend, Owner: owner, TTL: ext}, rr, func(ctx context.Context) (history.Outcome, int64, error) {
				return intReply(c.cs[rr].Do(ctx, "LOCK.EXTEND", key, owner, ext.Milliseconds()).Int64())
			})
		}
	}
	c.record(history.Op{Key: key, Kind: history.Release, Owner: owner}, r, func(ctx context.Context) (history.Outcome, int64, error) {
		return intReply(conn.Do(ctx, "LOCK.RELEASE", key, owner).Int64())
	})
}

// hostileCommands aim at the proxy's own bookkeeping on the backends (the
// fencing counter, the notes beside locks, the deployment marker, the fair
// queues): each must be refused. They are what the third safety review
// sent (e2e/safety_review3_test.go), for keys of this run, but none that
// names a lock's own key: deleting someone's lock breaks any lock on any
// Redis, and an anomaly here must be the bookkeeping's.
func hostileCommands(keys []string) [][]any {
	k := keys[0]
	return [][]any{
		{"DEL", "__redlock:token"},
		{"SET", "__redlock:token", "1", "PX", 600000},
		{"EVAL", unlockScript, 1, "__redlock:token", "1"},
		{"EVAL", unlockScript, 1, "__redlock:m:" + k, "x"},
		{"SET", "__redlock:intact", "run", "NX", "PX", 10000},
		{"DEL", "__redlock:q:" + k, "__redlock:max_ttl", "__redlock:counters"},
		{"UNLINK", "__redlock:intact", "__redlock:token"},
		{"LOCK.ACQUIRE", "__redlock:token", "me", 1000},
		{"PUBLISH", "__redlock:wait:" + k, "released"},
	}
}

// hostile sends hostileCommands through the replicas in turn until stop;
// accepted counts the ones not refused.
func hostile(w *world, sent, accepted *atomic.Int64) {
	cmds := hostileCommands(w.keys)
	var cs []*redis.Client
	for _, a := range w.addrs {
		c := redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1, ReadTimeout: 5 * time.Second})
		defer c.Close()
		cs = append(cs, c)
	}
	for n := 0; ; n++ {
		select {
		case <-w.stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
		err := cs[n%len(cs)].Do(context.Background(), cmds[n%len(cmds)]...).Err()
		sent.Add(1)
		if err == nil || errors.Is(err, redis.Nil) {
			accepted.Add(1)
		}
	}
}

// rwlock: Redisson's RReadWriteLock, read (two in three) or write: the lock
// script (nil: granted; a PTTL: refused), maybe the holder's renewal, then
// the unlock script. Reads are recorded Shared: readers may overlap each
// other, never a writer.
func (c *client) rwlock(key, owner string, r int, ttl time.Duration) {
	thread := "5e0f2a71-4b8c-4d2e-9f13-" + owner + ":1" // Redisson's <uuid>:<threadId>
	write := c.rng.IntN(3) == 0
	name, acquire, unlock, renew := thread, c.w.scripts.rwRead, c.w.scripts.rwReadUnlock, c.w.scripts.rwRenewRd
	keys, args := []string{key, "{" + key + "}:" + thread + ":rwlock_timeout"}, []any{ttl.Milliseconds(), thread, thread + ":write"}
	if write {
		name, acquire, unlock, renew = thread+":write", c.w.scripts.rwWrite, c.w.scripts.rwWriteUnlock, c.w.scripts.renew
		keys, args = []string{key}, []any{ttl.Milliseconds(), name}
	}
	out, _ := c.record(history.Op{Key: key, Kind: history.Acquire, Owner: name, TTL: ttl, Delay: c.w.libDelay, Shared: !write}, r, func(ctx context.Context) (history.Outcome, int64, error) {
		return lockReply(c.cs[r].Eval(ctx, acquire, keys, args...).Int64())
	})
	if out == history.Taken {
		return
	}
	c.sleep(c.holdFor(ttl) / 2)
	if c.rng.IntN(3) == 0 {
		c.record(history.Op{Key: key, Kind: history.Extend, Owner: name, TTL: ttl}, r, func(ctx context.Context) (history.Outcome, int64, error) {
			return intReply(c.cs[r].Eval(ctx, renew, []string{key, "{" + key + "}"}, ttl.Milliseconds(), name).Int64())
		})
	}
	c.sleep(c.holdFor(ttl) / 2)
	latch := fmt.Sprintf("redisson_unlock_latch:{%s}:%s", key, name)
	ch := "redisson_rwlock:{" + key + "}"
	c.record(history.Op{Key: key, Kind: history.Release, Owner: name}, r, func(ctx context.Context) (history.Outcome, int64, error) {
		var res *redis.Cmd
		if write {
			res = c.cs[r].Eval(ctx, unlock, []string{key, ch, latch}, 1, ttl.Milliseconds(), name, "publish", 10000)
		} else {
			res = c.cs[r].Eval(ctx, unlock, []string{key, ch, "{" + key + "}:" + thread + ":rwlock_timeout", "{" + key + "}", latch}, 0, name, "publish", 10000)
		}
		n, err := res.Int64()
		if errors.Is(err, redis.Nil) {
			return history.NotHeld, 0, nil
		}
		if err == nil && n >= 0 {
			return history.OK, 0, nil // 1: free now, 0: other readers hold it
		}
		return intReply(n, err)
	})
}
