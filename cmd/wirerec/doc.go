// Command wirerec records a client library's session with the proxy: it
// listens on one local port per proxy replica, relays every connection to
// its replica, and writes each message both ways to a transcript (see
// internal/transcript). Point the client at the local ports, run it, stop
// wirerec with Ctrl-C.
//
//	go run ./cmd/wirerec -out compat/transcripts/x.jsonl -client "Jedis 5.1.5" \
//	  -scenario "..." -lease-ms 30000 127.0.0.1:7380=127.0.0.1:6380 127.0.0.1:7381=127.0.0.1:6381
package main
