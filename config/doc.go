// Package config holds redlock-proxy's settings: Config with Default(),
// Load (defaults < YAML file < REDLOCK_* environment < flags) and Validate,
// whose errors name the offending field (embedded backends on a listen
// address beyond loopback among them); CheckEnviron refuses unknown
// REDLOCK_* variables. Only internal/app maps a Config onto the quorum and
// proxy packages' options.
package config
