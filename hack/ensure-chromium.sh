#!/usr/bin/env bash
# Installs headless Chromium and its WebDriver (Debian packages chromium and chromium-driver,
# plus fonts-liberation so pages render text) when either is missing, without recommended
# packages (Chromium recommends udev, upower, a printer tool: none used headless); the
# status-page test (test/integration/statuspage) drives them.
# Idempotent: does nothing when both are on PATH. Uses sudo only when not root.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "ensure-chromium: chromium and chromedriver are missing and apt-get is not available; install Chromium and a matching ChromeDriver and put both on PATH" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "ensure-chromium: installing Debian packages chromium, chromium-driver and fonts-liberation (--no-install-recommends)"
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-liberation
command -v chromium >/dev/null && command -v chromedriver >/dev/null
