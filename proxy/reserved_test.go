package proxy

import "testing"

// TestOneOwnerPerName: a name belongs to the tenant whose prefix starts its
// lock name, never to a second one through braces.
func TestOneOwnerPerName(t *testing.T) {
	tests := []struct {
		name, owner string
	}{
		{"search:{billing:x}", "search:"},
		{"billing:job", "billing:"},
		{"{billing:x}", ""},
		{"redisson_rwlock:{billing:x}", "billing:"},
		{"redisson_lock__channel:{billing:job}", "billing:"},
		{"redisson_unlock_latch:{billing:job}:7", "billing:"},
		{"redisson_lock_token:{billing:job}", "billing:"},
		{"redisson_lock__channel:search:{billing:x}", "search:"},
		{"redisson_unlock_latch:search:{billing:x}:7", "search:"},
		{"other:{search:x}", ""},
	}
	for _, tt := range tests {
		for _, p := range []string{"search:", "billing:"} {
			if got := owns(p, []byte(tt.name)); got != (p == tt.owner) {
				t.Errorf("owns(%q, %q) = %v; the owner is %q", p, tt.name, got, tt.owner)
			}
		}
		if !owns("", []byte(tt.name)) {
			t.Errorf("a user without a prefix does not own %q", tt.name)
		}
	}
}

// TestReservedIn: every place a command names a key, channel or pattern.
func TestReservedIn(t *testing.T) {
	s := &Server{}
	table := s.commandTable()
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"get", "__redlock:token"}, true},
		{[]string{"get", "__REDLOCK:token"}, false},
		{[]string{"del", "a", "__redlock:intact"}, true},
		{[]string{"eval", "x", "2", "a", "__redlock:token", "__redlock:argv-is-not-a-key"}, true},
		{[]string{"eval", "x", "1", "a", "__redlock:argv"}, false},
		{[]string{"redlock", "forceunlock", "__redlock:q:k"}, true},
		{[]string{"redlock", "locks", "__redlock:"}, true},
		{[]string{"subscribe", "a", "__redlock:wait:k"}, true},
		{[]string{"psubscribe", "__redlock:*"}, true},
		{[]string{"psubscribe", "*", "__redlock*"}, false},
		{[]string{"publish", "__redlock:wait:k", "x"}, true},
		{[]string{"publish", "ch", "__redlock:wait:k"}, false},
		{[]string{"lock.acquire", "__redlock:max_ttl", "o", "1000"}, true},
	}
	for _, tt := range tests {
		args := make([][]byte, len(tt.args))
		for i, a := range tt.args {
			args[i] = []byte(a)
		}
		if got := reservedIn(table[tt.args[0]], args); got != tt.want {
			t.Errorf("reservedIn(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}
