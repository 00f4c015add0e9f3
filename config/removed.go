package config

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// removed names settings that no longer exist, and what to do instead.
// Load refuses each, by its YAML key, flag or environment variable, rather
// than ignoring it: an operator who set it must learn that it is gone.
var removed = map[string]string{
	"initial_cluster_state": "removed: a setting left on could mark a restarted backend as new and hand out locks still held. " +
		"Delete it. To let the backends of a brand-new deployment count at once, run `redlock-proxy bootstrap` once " +
		"with the same backends (it refuses once any backend carries a marker or a replica has seen it); " +
		"after a restart or power loss, bootstrap nothing: wait out the restart quarantine (README, Restart quarantine)",
}

// removedError is the error for a removed setting given as where.
func removedError(where, key string) error {
	return fmt.Errorf("config: %s: %s", where, removed[key])
}

// removedInEnv refuses a removed setting's environment variable.
func removedInEnv(getenv func(string) string) error {
	for key := range removed {
		if getenv(envName(key)) != "" {
			return removedError(envName(key), key)
		}
	}
	return nil
}

// removedInYAML refuses a removed setting's key in the YAML file at path.
func removedInYAML(path string, data []byte) error {
	var top map[string]any
	if yaml.Unmarshal(data, &top) != nil {
		return nil // the decoder says what is wrong with it
	}
	for key := range removed {
		if _, ok := top[key]; ok {
			return removedError(path+": "+key, key)
		}
	}
	return nil
}
