package quorum

import (
	"strings"
	"testing"
	"time"
)

// TestLockDelayIsOffOrLongEnough: a lock-delay is 0 (off) or at least
// MinLockDelay; the scripts count a note's lead of a few ms over its key as
// the clock's tick between two writes, not as a delay (delifeq.lua), so a
// shorter one would not be kept.
func TestLockDelayIsOffOrLongEnough(t *testing.T) {
	for _, c := range []struct {
		plain, native time.Duration
		bad           string
	}{
		{0, 0, ""},
		{MinLockDelay, 5 * time.Second, ""},
		{time.Millisecond, 5 * time.Second, "lock_delay"},
		{0, 9 * time.Millisecond, "native_lock_delay"},
		{-time.Second, 0, "lock_delay"},
	} {
		s := DefaultSettings()
		s.LockDelay, s.NativeLockDelay = c.plain, c.native
		err := s.Validate()
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("lock delays %v, %v: %v; want valid", c.plain, c.native, err)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("lock delays %v, %v: %v; want %s refused", c.plain, c.native, err, c.bad)
		}
	}
}
