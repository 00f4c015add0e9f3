package scriptbook

import (
	"fmt"
	"strconv"
	"strings"
)

// Reply is one reply of a convention: +OK, a nil reply or an integer.
type Reply struct {
	Status, Null bool
	N            int64
}

// ParseReply reads a convention's reply as an operator writes it: OK, nil,
// an integer, or a Lua boolean (true is 1, false a nil reply).
func ParseReply(s string) (Reply, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ok", "+ok":
		return Reply{Status: true}, nil
	case "nil", "false":
		return Reply{Null: true}, nil
	case "true":
		return Reply{N: 1}, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return Reply{}, fmt.Errorf("%q is not a reply this proxy can give: want OK, nil, an integer, true or false", s)
	}
	return Reply{N: n}, nil
}

// Convention is what a registered script answers: yes when it did what its
// meaning says (granted, extended, released), no when it did not (taken,
// not held).
type Convention struct{ Yes, No Reply }
