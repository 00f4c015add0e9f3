// Package config holds redlock-proxy's settings: Config with Default(),
// Load (defaults < YAML file < REDLOCK_* environment < flags) and Validate,
// whose errors name the offending field. Only main maps a Config onto the
// quorum and proxy packages' options.
package config
