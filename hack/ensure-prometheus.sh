#!/usr/bin/env bash
# Installs Prometheus (Debian package "prometheus") when it is missing: test/integration/dashboard
# runs a real Prometheus against the syncer. Idempotent; uses sudo only when not root.
# VCSYNCER_PROMETHEUS=/path/to/prometheus skips the install.
set -euo pipefail

if [[ -n "${VCSYNCER_PROMETHEUS:-}" ]] || command -v prometheus >/dev/null 2>&1; then
	exit 0
fi
sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "ensure-prometheus: prometheus is missing; install the Debian package 'prometheus' as root" >&2
		exit 1
	fi
	sudo=(sudo -n)
fi
echo "ensure-prometheus: installing the Debian package prometheus"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
# No recommends: they add node-exporter and friends, which the test does not need.
"${sudo[@]}" apt-get install -y -qq --no-install-recommends prometheus >/dev/null
command -v prometheus >/dev/null
