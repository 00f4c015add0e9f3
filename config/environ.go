package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// CheckEnviron refuses REDLOCK_* variables that name no setting, as unknown
// YAML keys are refused: a typo (REDLOCK_BACKEND for REDLOCK_BACKENDS) must
// not leave a setting at its default unnoticed. environ is os.Environ()'s
// form, KEY=value.
func CheckEnviron(environ []string) error {
	known := []string{"REDLOCK_CONFIG"}
	for _, s := range settings {
		known = append(known, envName(s.key))
	}
	var errs []error
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "REDLOCK_") || slices.Contains(known, name) {
			continue
		}
		msg := fmt.Sprintf("config: unknown environment variable %s", name)
		if near := nearest(name, known); near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		}
		errs = append(errs, errors.New(msg+"; redlock-proxy -h lists every REDLOCK_* variable"))
	}
	return errors.Join(errs...)
}
