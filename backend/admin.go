package backend

// The calls Node answers off the lock path: identity, scans, records
// and fencing counter repairs.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-proxy/redlock-proxy/quorum"
)

// Info implements quorum.Node.
func (n *Node) Info(ctx context.Context) (quorum.NodeInfo, error) {
	return readInfo(ctx, redisInfo{n.client}, n.fixed.Load())
}

// SetIdentity gives the node an identity for a server that reports no
// run_id (an in-process test server): runID must change whenever the
// server starts empty, and started is when it did. Call it before New.
func (n *Node) SetIdentity(runID string, started time.Time) {
	n.fixed.Store(&identity{runID: runID, started: started})
}

// identity is a run of a server that does not report its own.
type identity struct {
	runID   string
	started time.Time
}

// Keys implements quorum.Node.
func (n *Node) Keys(ctx context.Context, prefix string, limit int) ([]string, error) {
	match := globEscaper.Replace(prefix) + "*"
	var keys []string
	var cursor uint64
	for {
		batch, next, err := n.client.Scan(ctx, cursor, match, 1000).Result()
		if err != nil {
			return nil, err
		}
		keys = append(keys, batch...)
		if cursor = next; cursor == 0 || len(keys) >= limit {
			return keys[:min(len(keys), limit)], nil
		}
	}
}

var globEscaper = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)

// Watch implements quorum.Node.
func (n *Node) Watch(f func(quorum.NodeInfo)) {
	n.watchMu.Lock()
	n.watch = f
	n.watchMu.Unlock()
}

// infoSource runs readInfo's reads on a client, one of its connections or
// a link: INFO server persistence (withInfo) and MGET of the marks in one
// round trip; CONFIG GET appendfsync.
type infoSource interface {
	infoAndMarks(ctx context.Context, withInfo bool) (info string, marks []any, err error)
	appendfsync(ctx context.Context) (string, error)
}

// readInfo reads run_id, uptime, whether every write is fsynced, the intact
// marker and the max-TTL record, in one round trip (two with AOF on). A
// backend that refuses CONFIG GET counts as not persistent. A server's
// error reply comes back as a *quorum.ReplyError.
func readInfo(ctx context.Context, c infoSource, fixed *identity) (quorum.NodeInfo, error) {
	text, marks, err := c.infoAndMarks(ctx, fixed == nil)
	if err != nil {
		return quorum.NodeInfo{}, sortErr(err)
	}
	var info quorum.NodeInfo
	if fixed != nil {
		return withMarks(quorum.NodeInfo{RunID: fixed.runID, Uptime: time.Since(fixed.started)}, marks), nil
	}
	aof := false
	for _, line := range strings.Split(text, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		switch k {
		case "run_id":
			info.RunID = v
		case "uptime_in_seconds":
			secs, _ := strconv.ParseInt(v, 10, 64)
			info.Uptime = time.Duration(secs) * time.Second
		case "aof_enabled":
			aof = v == "1"
		}
	}
	if info.RunID == "" {
		return quorum.NodeInfo{}, errors.New("INFO server has no run_id")
	}
	if aof {
		if fsync, err := c.appendfsync(ctx); err == nil {
			info.Persistent = fsync == "always"
		}
	}
	return withMarks(info, marks), nil
}

// withMarks adds the deployment marker and the max-TTL record (MGET's
// values) to info.
func withMarks(info quorum.NodeInfo, marks []any) quorum.NodeInfo {
	marker, _ := marks[0].(string)
	info.Marked, info.Intact, info.Marker = marker != "", marker != "" && quorum.MarkerRun(marker) == info.RunID, marker
	if s, ok := marks[1].(string); ok {
		ms, _ := strconv.ParseInt(s, 10, 64)
		info.MaxTTL = time.Duration(ms) * time.Millisecond
	}
	return info
}

// redisInfo is readInfo's source on a go-redis client or connection.
type redisInfo struct {
	c interface {
		Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
		ConfigGet(ctx context.Context, parameter string) *redis.MapStringStringCmd
	}
}

func (ri redisInfo) infoAndMarks(ctx context.Context, withInfo bool) (string, []any, error) {
	var (
		infoCmd *redis.StringCmd
		marks   *redis.SliceCmd
	)
	_, _ = ri.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		if withInfo {
			infoCmd = p.Info(ctx, "server", "persistence")
		}
		marks = p.MGet(ctx, quorum.IntactKey, quorum.MaxTTLKey)
		return nil
	})
	text := ""
	if withInfo {
		var err error
		if text, err = infoCmd.Result(); err != nil {
			return "", nil, err
		}
	}
	vals, err := marks.Result()
	if err != nil {
		return "", nil, err
	}
	return text, vals, nil
}

func (ri redisInfo) appendfsync(ctx context.Context) (string, error) {
	cfg, err := ri.c.ConfigGet(ctx, "appendfsync").Result()
	return cfg["appendfsync"], err
}

// Record implements quorum.Node.
func (n *Node) Record(ctx context.Context, ttl time.Duration, engine string, seq int64) (time.Duration, int64, error) {
	vals, err := recordScript.Run(ctx, n.client, []string{quorum.MaxTTLKey, quorum.EngineKey(engine)},
		ttl.Milliseconds(), quorum.EngineKeyTTL.Milliseconds(), seq).Int64Slice()
	if err == nil && len(vals) != 2 {
		err = fmt.Errorf("record script answered %d values", len(vals))
	}
	if err != nil {
		return 0, 0, err
	}
	return time.Duration(vals[0]) * time.Millisecond, vals[1], nil
}

// Counters implements quorum.Node.
func (n *Node) Counters(ctx context.Context) (map[string]int64, error) {
	keys, err := n.client.SMembers(ctx, quorum.CountersKey).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(keys))
	for chunk := range slices.Chunk(keys, 1000) {
		vals, err := n.client.MGet(ctx, chunk...).Result()
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			s, _ := v.(string)
			out[chunk[i]], _ = strconv.ParseInt(s, 10, 64)
		}
	}
	return out, nil
}

// Repair implements Node: the counters in chunks, the marker with the last;
// each chunk after the first checks that the first's note of this repair
// (RepairKey, holding a value of this call's own) is still there, so a
// backend flushed between two chunks is not marked without the counters
// before (repair.lua).
func (n *Node) Repair(ctx context.Context, marker, expect string, counters map[string]int64, floor int64) error {
	keys := slices.Sorted(maps.Keys(counters))
	nonce := "" // a chunked repair's own, in its note: a repair reusing the marker has another
	if len(keys) > repairChunk {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand's Read never fails
		nonce = hex.EncodeToString(b[:])
	}
	for i := 0; i == 0 || i < len(keys); i += repairChunk {
		chunk := keys[i:min(i+repairChunk, len(keys))]
		args := []any{"", expect, 0, nonce, 0}
		if i+repairChunk >= len(keys) {
			args[0], args[2] = marker, floor
		}
		if i == 0 {
			args[4] = 1
		}
		for _, k := range chunk {
			args = append(args, k, counters[k])
		}
		done, err := repairScript.Run(ctx, n.client, []string{quorum.CountersKey, quorum.IntactKey, quorum.RepairKey(marker)}, args...).Int64()
		if err != nil {
			return err
		}
		if done == 0 {
			return quorum.ErrMarkerChanged
		}
		if repairChunkDone != nil {
			repairChunkDone()
		}
	}
	return nil
}

// repairChunk is how many counters one repair script call carries.
const repairChunk = 500

// repairChunkDone, when set (tests only), runs after each chunk of a repair.
var repairChunkDone func()

// MarkNew implements quorum.Node: one script that checks and marks at once.
func (n *Node) MarkNew(ctx context.Context, marker string, seed int64) error {
	marked, err := markNewScript.Run(ctx, n.client, []string{quorum.IntactKey, quorum.MaxTTLKey, quorum.CountersKey}, marker, seed).Int64()
	if err == nil && marked != 1 {
		err = fmt.Errorf("%w: a marker or a replica's max-TTL record appeared on it", quorum.ErrNotNew)
	}
	return err
}
