package backend

// The calls Node answers off the lock path: identity, scans, records
// and fencing counter repairs.

import (
	"context"
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
	info, err := readInfo(ctx, n.client, n.fixed.Load())
	return info, sortErr(err)
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

// infoReader is what readInfo needs: a client or one connection.
type infoReader interface {
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
	ConfigGet(ctx context.Context, parameter string) *redis.MapStringStringCmd
}

// readInfo reads run_id, uptime, whether every write is fsynced, the intact
// marker and the max-TTL record, in one round trip (two with AOF on). A
// backend that refuses CONFIG GET counts as not persistent.
func readInfo(ctx context.Context, c infoReader, fixed *identity) (quorum.NodeInfo, error) {
	var (
		infoCmd *redis.StringCmd
		marks   *redis.SliceCmd
	)
	_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		if fixed == nil {
			infoCmd = p.Info(ctx, "server", "persistence")
		}
		marks = p.MGet(ctx, quorum.IntactKey, quorum.MaxTTLKey)
		return nil
	})
	var info quorum.NodeInfo
	if fixed != nil {
		return withMarks(quorum.NodeInfo{RunID: fixed.runID, Uptime: time.Since(fixed.started)}, marks)
	}
	text, err := infoCmd.Result()
	if err != nil {
		return quorum.NodeInfo{}, err
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
		if cfg, err := c.ConfigGet(ctx, "appendfsync").Result(); err == nil {
			info.Persistent = cfg["appendfsync"] == "always"
		}
	}
	return withMarks(info, marks)
}

// withMarks adds the deployment marker and the max-TTL record to info.
func withMarks(info quorum.NodeInfo, marks *redis.SliceCmd) (quorum.NodeInfo, error) {
	vals, err := marks.Result()
	if err != nil {
		return quorum.NodeInfo{}, err
	}
	marker, _ := vals[0].(string)
	info.Marked, info.Intact = marker != "", marker != "" && marker == info.RunID
	if s, ok := vals[1].(string); ok {
		ms, _ := strconv.ParseInt(s, 10, 64)
		info.MaxTTL = time.Duration(ms) * time.Millisecond
	}
	return info, nil
}

// Record implements quorum.Node.
func (n *Node) Record(ctx context.Context, ttl time.Duration) (time.Duration, error) {
	ms, err := recordScript.Run(ctx, n.client, []string{quorum.MaxTTLKey}, ttl.Milliseconds()).Int64()
	return time.Duration(ms) * time.Millisecond, err
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

// Repair implements Node: the counters in chunks, the marker with the last.
func (n *Node) Repair(ctx context.Context, runID string, counters map[string]int64) error {
	keys := slices.Sorted(maps.Keys(counters))
	for i := 0; i == 0 || i < len(keys); i += 500 {
		chunk := keys[i:min(i+500, len(keys))]
		args := []any{""}
		if i+500 >= len(keys) {
			args[0] = runID
		}
		for _, k := range chunk {
			args = append(args, k, counters[k])
		}
		if err := repairScript.Run(ctx, n.client, []string{quorum.CountersKey, quorum.IntactKey}, args...).Err(); err != nil {
			return err
		}
	}
	return nil
}

// MarkNew implements quorum.Node: one script that checks and marks at once.
func (n *Node) MarkNew(ctx context.Context, runID string, counters map[string]int64) error {
	args := []any{runID}
	for _, k := range slices.Sorted(maps.Keys(counters)) {
		args = append(args, k, counters[k])
	}
	marked, err := markNewScript.Run(ctx, n.client, []string{quorum.IntactKey, quorum.MaxTTLKey, quorum.CountersKey}, args...).Int64()
	if err == nil && marked != 1 {
		err = fmt.Errorf("%w: a marker or a replica's max-TTL record appeared on it", quorum.ErrNotNew)
	}
	return err
}
