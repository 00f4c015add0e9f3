// Package resp reads whole RESP2 and RESP3 messages off a stream, keeping
// each one's exact bytes beside its parsed form. The wire recorder and the
// transcript replay tests use it to cut a byte stream into messages and to
// compare replies; the proxy's request path has its own reader.
package resp
