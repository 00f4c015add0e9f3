// Package wire reads the commands lock clients send, off an untrusted
// connection: RESP arrays of bulk strings and inline (telnet-style) lines,
// in batches of what arrived together. Every byte is examined at most once
// whatever the read sizes, nothing is allocated or looped over by a count
// or length the peer declares before that many bytes arrived, and no
// command may take more than its size and argument bounds; a malformed
// request is a ProtocolError, answered once before the connection closes.
// It knows no command: the proxy's core (proxy/conn.go) reads with it and
// dispatches what it returns.
//
//	reader.go  Reader: RESP commands, bounded, in batches; Keep holds bytes read
//	           while a command blocked (the proxy's hang-up watch) for the next read
//	inline.go  inline commands, split and unescaped as Redis does
package wire
