package quorum

import (
	"errors"
	"fmt"
	"time"
)

// Settings are the engine's tunables. DefaultSettings gives every default
// and Validate every bound; they are the only place either is written: the
// proxy's configuration embeds Settings (the YAML names are the tags).
type Settings struct {
	// DriftFactor bounds the clock-rate difference between proxy and
	// backends, as a fraction; TTLs are padded by it. Default 0.01; [0, 0.5).
	DriftFactor float64 `yaml:"drift_factor"`
	// NodeTimeout bounds the wait for one backend in a round. Default
	// 250ms; positive, below MaxTTL.
	NodeTimeout time.Duration `yaml:"node_timeout"`
	// TimeoutFactor further bounds a lock round's per-backend wait to this
	// fraction of the lock TTL. Default 0.05; (0, 1).
	TimeoutFactor float64 `yaml:"timeout_factor"`
	// MinValidity is the least time a client must have left when a lock is
	// granted or extended. Default 10ms; not negative, below MaxTTL.
	MinValidity time.Duration `yaml:"min_validity"`
	// MaxTTL is the longest lock TTL a client may ask for. Default 10m; positive.
	MaxTTL time.Duration `yaml:"max_ttl"`
	// Quarantine keeps a backend that restarted (or is younger than
	// max_ttl at start) from counting toward an acquire or extend quorum
	// until max_ttl has passed. Default true; false is unsafe: a backend that
	// restarted empty can hand a held lock to a second owner.
	Quarantine bool `yaml:"quarantine"`
	// HealthInterval is how often each backend's run_id and reachability
	// are checked. Default 1s; positive.
	HealthInterval time.Duration `yaml:"health_interval"`
	// LockDelay is Chubby's lock-delay for the locks Acquire grants (SET NX
	// PX and the client libraries' scripts): a lock that expired without
	// being released stays unavailable this long after its TTL; a released
	// one is free at once. Default 0 (Redis's own behaviour); else at least
	// MinLockDelay.
	LockDelay time.Duration `yaml:"lock_delay"`
	// NativeLockDelay is the lock-delay of the locks AcquireFenced grants
	// (the proxy's LOCK.ACQUIRE). Default 5s; 0 or at least MinLockDelay.
	NativeLockDelay time.Duration `yaml:"native_lock_delay"`
}

// MinLockDelay is the shortest lock-delay there is: a note's lead over its
// key of a few ms is the backend clock's tick between two writes, which the
// scripts do not count as a delay (delifeq.lua).
const MinLockDelay = 10 * time.Millisecond

// DefaultSettings returns the settings used where nothing else is said.
func DefaultSettings() Settings {
	return Settings{
		DriftFactor:    0.01,
		NodeTimeout:    250 * time.Millisecond,
		TimeoutFactor:  0.05,
		MinValidity:    10 * time.Millisecond,
		MaxTTL:         10 * time.Minute,
		Quarantine:     true,
		HealthInterval: time.Second,

		NativeLockDelay: 5 * time.Second,
	}
}

// SettingError is one setting out of its bounds, named as in the
// configuration file.
type SettingError struct {
	Setting string
	Problem string
}

func (e *SettingError) Error() string { return e.Setting + ": " + e.Problem }

// Validate reports every setting out of bounds (Problems), joined.
func (s Settings) Validate() error {
	var errs []error
	for _, p := range s.Problems() {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// Problems lists every setting out of its bounds.
func (s Settings) Problems() []*SettingError {
	var errs []*SettingError
	bad := func(setting, format string, args ...any) {
		errs = append(errs, &SettingError{Setting: setting, Problem: fmt.Sprintf(format, args...)})
	}
	if s.DriftFactor < 0 || s.DriftFactor >= 0.5 {
		bad("drift_factor", "%v outside [0, 0.5)", s.DriftFactor)
	}
	if s.TimeoutFactor <= 0 || s.TimeoutFactor >= 1 {
		bad("timeout_factor", "%v outside (0, 1)", s.TimeoutFactor)
	}
	for _, p := range []struct {
		setting string
		d       time.Duration
	}{{"node_timeout", s.NodeTimeout}, {"max_ttl", s.MaxTTL}, {"health_interval", s.HealthInterval}} {
		if p.d <= 0 {
			bad(p.setting, "%v must be positive", p.d)
		}
	}
	if s.MinValidity < 0 {
		bad("min_validity", "%v must not be negative", s.MinValidity)
	}
	if s.MaxTTL > 0 && s.NodeTimeout >= s.MaxTTL {
		bad("node_timeout", "%v must be shorter than max_ttl %v: a backend could be waited on longer than any lock lives", s.NodeTimeout, s.MaxTTL)
	}
	for _, p := range []struct {
		setting string
		d       time.Duration
	}{{"lock_delay", s.LockDelay}, {"native_lock_delay", s.NativeLockDelay}} {
		if p.d < 0 {
			bad(p.setting, "%v must not be negative", p.d)
		}
		if p.d > 0 && p.d < MinLockDelay {
			bad(p.setting, "%v must be 0 (off) or at least %v: the backends keep a lock's delay to the ms, and a lead of a few ms is their clock's tick", p.d, MinLockDelay)
		}
	}
	if s.MaxTTL > 0 && s.MinValidity >= s.MaxTTL {
		bad("min_validity", "%v must be shorter than max_ttl %v, or no lock could ever be granted", s.MinValidity, s.MaxTTL)
	}
	return errs
}
