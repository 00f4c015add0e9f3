package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redlock-proxy/redlock-proxy/internal/transcript"
)

// Redisson 3.52's RLock scripts, by SHA1: lock (KEYS[1] the lock; ARGV
// lease ms, owner) and unlock (KEYS lock, channel, latch; ARGV the unlock
// message 0, lease ms, owner, "PUBLISH", the latch's ms).
const (
	redissonLockSHA   = "149c5a8bf18676fd99e9e6e24923bd64d9b62f94"
	redissonUnlockSHA = "6866459238a13a701d42f4971f12d9f3a50e2442"
)

// rlockScripts are the texts Redisson 3.52 sent, taken from its recorded
// transcript (compat/transcripts), as a real client's EVAL carried them.
type rlockScripts struct{ lock, unlock *redis.Script }

func loadRLockScripts(root string) (rlockScripts, error) {
	tr, err := transcript.Load(filepath.Join(root, "compat/transcripts/redisson-3.52.0-rlock.jsonl"))
	if err != nil {
		return rlockScripts{}, err
	}
	lock, ok1 := tr.Script(redissonLockSHA)
	unlock, ok2 := tr.Script(redissonUnlockSHA)
	if !ok1 || !ok2 {
		return rlockScripts{}, fmt.Errorf("the Redisson 3.52 transcript lacks its lock or unlock script")
	}
	return rlockScripts{redis.NewScript(lock), redis.NewScript(unlock)}, nil
}

// rlockCycles: Redisson's RLock lock and unlock scripts sent as Redisson
// sends them (EVALSHA, EVAL where the server lacks the script), then the
// DEL of the unlock's latch that Redisson 3.24+ sends and its unlock waits
// for, each worker a thread of its own on a lock of its own named after
// name.
func rlockCycles(s rlockScripts, name, addr string, workers int, d time.Duration) (float64, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: workers, MaxRetries: -1})
	defer c.Close()
	return cycles(workers, d, func(ctx context.Context, w, n int) error {
		key, owner := fmt.Sprintf("rlock:%s:%d", name, w), fmt.Sprintf("bench-%s:%d", name, w)
		keys := []string{key, "redisson_lock__channel:{" + key + "}", fmt.Sprintf("redisson_unlock_latch:{%s}:%d", key, n)}
		if v, err := s.lock.Run(ctx, c, keys[:1], 30000, owner).Result(); err != redis.Nil {
			return fmt.Errorf("lock: %v %v", v, err) // nil: acquired
		}
		if v, err := s.unlock.Run(ctx, c, keys, 0, 30000, owner, "PUBLISH", 5000).Int(); err != nil || v != 1 {
			return fmt.Errorf("unlock: %v %v", v, err)
		}
		if err := c.Del(ctx, keys[2]).Err(); err != nil {
			return fmt.Errorf("DEL of the latch: %v", err)
		}
		return nil
	})
}
