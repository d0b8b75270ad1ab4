#!/usr/bin/env bash
# Prints the path of golangci-lint v2.15.0, building it from its Go module into the tools cache
# (~/.cache/vc-syncer) the first time (a few minutes on 2 cores).
set -euo pipefail
version=v2.15.0
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vc-syncer
dir="$cache/golangci-lint-$version"
if [ ! -x "$dir/golangci-lint" ]; then
	echo "building golangci-lint $version into $dir" >&2
	mkdir -p "$dir"
	GOBIN="$dir" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version" >&2
fi
echo "$dir/golangci-lint"
