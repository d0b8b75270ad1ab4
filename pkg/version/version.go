package version

import "runtime"

// Set by the linker.
var (
	// Version is the release version, "dev" for a local build.
	Version = "dev"
	// GitCommit is the commit the binary was built from.
	GitCommit = "unknown"
)

// String returns "vc-syncer <version> (commit <commit>, <go version>)".
func String() string {
	return "vc-syncer " + Version + " (commit " + GitCommit + ", " + runtime.Version() + ")"
}
