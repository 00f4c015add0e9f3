package proxy

import (
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestHelpAnswersLikeRedis: CMD HELP is an array of status lines, as Redis
// answers it (the "Try CMD HELP." of an unknown subcommand leads there),
// for every user, admin or not.
func TestHelpAnswersLikeRedis(t *testing.T) {
	_, addr := serve(t)
	for _, cmd := range []string{"CLIENT", "REDLOCK", "SCRIPT", "COMMAND"} {
		send := "*2\r\n$" + strconv.Itoa(len(cmd)) + "\r\n" + cmd + "\r\n$4\r\nhelp\r\n"
		raw := converse(t, addr, send, 1)
		if strings.HasPrefix(raw[0], "*") {
			raw = converse(t, addr, send, 2)
		}
		if len(raw) < 2 || raw[1] != "+"+cmd+" <subcommand> [<arg> [value] [opt] ...]. Subcommands are:" {
			t.Errorf("%s HELP = %q; want an array whose first line is Redis's", cmd, raw)
			continue
		}
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		lines, err := rdb.Do(t.Context(), cmd, "HELP").StringSlice()
		_ = rdb.Close()
		if err != nil || len(lines) < 5 || lines[len(lines)-2] != "HELP" || lines[len(lines)-1] != "    Print this help." {
			t.Errorf("%s HELP = %q, %v", cmd, lines, err)
		}
	}
}
