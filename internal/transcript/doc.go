// Package transcript is the format of recorded client sessions: what a real
// client library sent and was answered, message by message, per connection,
// with timing. Recordings are made with cmd/wirerec between a client and the
// proxy's replicas; the replay tests send them again to the proxy and to one
// plain redis-server and compare the replies.
//
// A transcript is JSON lines: a Header, then one Event per message; a
// message that is not valid UTF-8 (binary arguments) is kept base64-encoded
// (Event.Send64, Recv64), which Load decodes.
package transcript
