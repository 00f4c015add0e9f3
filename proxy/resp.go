package proxy

import "strconv"

// Replies whose encoding differs between RESP2 and RESP3. Everything else
// the proxy sends (simple strings, errors, integers, bulk strings, arrays)
// is the same in both.

// writeNull: RESP3's null, or RESP2's null bulk string.
func (c *request) writeNull() {
	if c.proto == 3 {
		c.wr.WriteRaw([]byte("_\r\n"))
		return
	}
	c.wr.WriteNull()
}

// writeMapHeader starts a map of n pairs: RESP3's map, or a flat RESP2 array.
func (c *request) writeMapHeader(n int) {
	if c.proto == 3 {
		c.wr.WriteRaw(append(strconv.AppendInt([]byte{'%'}, int64(n), 10), '\r', '\n'))
		return
	}
	c.wr.WriteArray(2 * n)
}
