package quorum

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRoundsRefuseReservedKeys: whatever a caller passes, no round puts a
// key under InternalPrefix that the engine did not choose itself on a
// node: the markers and counters a health check reads are the engine's
// writes alone.
func TestRoundsRefuseReservedKeys(t *testing.T) {
	fs, nodes := fakes(3)
	e := newEngine(t, nodes)
	ctx := context.Background()
	ttl := time.Second
	for _, k := range []string{IntactKey, TokenKey, MaxTTLKey, CountersKey, MetaKey("k"), QueueKey("k"), WriterKey(TokenKey)} {
		errs := map[string]error{}
		_, errs["Acquire"] = e.Acquire(ctx, k, "v", ttl)
		_, errs["AcquireFenced"] = e.AcquireFenced(ctx, k, "v", ttl)
		_, errs["Extend"] = e.Extend(ctx, k, "v", ttl)
		_, errs["Overwrite"] = e.Overwrite(ctx, k, "v", ttl, "")
		_, errs["OverwriteIfEq"] = e.OverwriteIfEq(ctx, k, "old", "v", ttl)
		errs["Release"] = e.Release(ctx, k, "v")
		_, errs["ForceRelease"] = e.ForceRelease(ctx, k)
		_, errs["Read"] = e.Read(ctx, k)
		_, errs["AcquireHash"] = e.AcquireHash(ctx, k, "o", ttl, "")
		_, errs["AcquireHash token"] = e.AcquireHash(ctx, "lock", "o", ttl, CountersKey)
		_, errs["ReleaseHash latch"] = e.ReleaseHash(ctx, "lock", "o", ttl, k, ttl, false)
		_, errs["ExtendHash"] = e.ExtendHash(ctx, k, "o", ttl)
		errs["Renew"] = errors.Join(e.Renew(ctx, []Lease{{Key: k, Value: "v", TTL: ttl}})...)
		_, errs["AcquireWaiting"] = e.AcquireWaiting(ctx, k, "v", ttl)
		_, errs["ReleaseFair"] = e.ReleaseFair(ctx, k, "v")
		_, errs["Get"] = e.Get(ctx, k)
		_, errs["TokenOf"] = e.TokenOf(ctx, k)
		_, errs["ReadField"] = e.ReadField(ctx, k, "f", false)
		_, errs["ReadCounter"] = e.ReadCounter(ctx, k)
		errs["Enqueue"] = e.Enqueue(ctx, k, "w", ttl)
		_, errs["QueueBeat"] = e.QueueBeat(ctx, k, "w", ttl)
		e.Dequeue(k, "w")
		for what, err := range errs {
			if !errors.Is(err, ErrReserved) {
				t.Errorf("%s(%s) = %v; want ErrReserved", what, k, err)
			}
		}
	}
	for _, f := range fs {
		for kind, name := range opNames {
			if n := f.callCount(name); n > 0 {
				t.Errorf("%s got %d %s calls (op %d)", f.name, n, name, kind)
			}
		}
	}
}
