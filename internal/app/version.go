package app

import "runtime/debug"

// version and commit name this build. Release builds set them:
//
//	go build -ldflags "-X github.com/redlock-proxy/redlock-proxy/internal/app.version=v1.2.3 \
//	  -X github.com/redlock-proxy/redlock-proxy/internal/app.commit=$(git rev-parse HEAD)"
//
// Unset, they come from the build information the go command records (the
// module version, and the VCS revision of a build in a git checkout).
var version, commit string

// Version returns this build's version and commit ("unknown" where
// neither the linker nor the build information says).
func Version() (ver, rev string) {
	ver, rev = version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if ver == "" && info.Main.Version != "(devel)" {
			ver = info.Main.Version
		}
		vcs := map[string]string{}
		for _, s := range info.Settings {
			vcs[s.Key] = s.Value
		}
		if rev == "" && vcs["vcs.revision"] != "" {
			rev = vcs["vcs.revision"]
			if vcs["vcs.modified"] == "true" {
				rev += "-dirty"
			}
		}
	}
	if ver == "" {
		ver = "devel"
	}
	if rev == "" {
		rev = "unknown"
	}
	return ver, rev
}
