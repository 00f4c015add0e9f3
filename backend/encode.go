package backend

import "github.com/redlock-proxy/redlock-proxy/quorum"

// What a script call is made of, kept in reusable slices so that a batch
// costs no allocation per operation: keys written as prefix and name (the
// engine's keys beside a lock, without joining them first), arguments as
// strings or integers (without boxing them).

// key is one key of a script call: prefix + name.
type key struct{ prefix, name string }

// arg is one argument of a script call: a string, or an integer.
type arg struct {
	s     string
	n     int64
	isInt bool
}

func str(s string) arg { return arg{s: s} }
func num(n int64) arg  { return arg{n: n, isInt: true} }

// encoder holds one call's keys and arguments (command), reused call after
// call by its worker.
type encoder struct {
	keys []key
	args []arg
}

// The prefixes of the engine's keys beside a lock (quorum's helpers of an
// empty name).
var (
	metaP       = quorum.MetaKey("")
	queueP      = quorum.QueueKey("")
	queueLeaseP = quorum.QueueLeaseKey("")
	pinP        = quorum.PinKey("")
	writerP     = quorum.WriterKey("")
	semP        = quorum.SemaphoreKey("")
	semLeaseP   = quorum.SemaphoreLeaseKey("")
	semGoneP    = quorum.SemaphoreGoneKey("")
	stampP      = quorum.GrantStampKey("")
)
