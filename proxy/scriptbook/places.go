package scriptbook

import "strings"

// Places lists the positions a spec reads.
func (s *Spec) Places() []Pos {
	return []Pos{s.Key, s.Owner, s.TTL, s.Token, s.Channel, s.Message, s.Latch, s.LatchTTL, s.Queue, s.Wait}
}

// Describe says where s reads its operands, for the error a short call gets.
func (s *Spec) Describe() string {
	names := []string{"the lock key", "the owner", "the TTL in ms", "the token counter", "the channel", "the message", "the latch", "the latch TTL in ms",
		"the queue", "the wait in ms"}
	var parts []string
	for i, p := range s.Places() {
		if p.N > 0 {
			parts = append(parts, p.String()+" "+names[i])
		}
	}
	if s.DBFirst {
		parts = append([]string{"ARGV[1] the database (0-15), the ARGV below counted after it"}, parts...)
	}
	if s.OwnerPerKey {
		parts = append(parts, "an owner in ARGV for each key")
	}
	return strings.Join(parts, ", ")
}
