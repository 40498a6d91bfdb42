#!/usr/bin/env bash
# Installs what `make run` / `make test` need and is missing: Node.js, the
# npm packages pinned in package-lock.json, Debian's chromium, Go modules.
# Never downloads a browser build of its own (npx playwright install).
set -euo pipefail
cd "$(dirname "$0")/.."

is_root() { [ "$(id -u)" = 0 ]; }
apt_updated=
apt_install() {
	if ! is_root || ! command -v apt-get >/dev/null 2>&1; then
		echo "ensure-deps: '$*' is missing; install it (Debian/Ubuntu: sudo apt-get install $*) and retry" >&2
		exit 1
	fi
	if [ -z "$apt_updated" ]; then
		apt-get update -qq >/dev/null
		apt_updated=1
	fi
	echo "ensure-deps: apt-get install $*" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

command -v node >/dev/null 2>&1 || apt_install nodejs npm
command -v npm >/dev/null 2>&1 || apt_install npm

# npm ci only when node_modules does not match the lock file.
if [ ! -f node_modules/@playwright/mcp/package.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	echo "ensure-deps: npm ci" >&2
	npm ci --no-audit --no-fund --loglevel=error >&2
fi

if [ -z "${PROXY_BROWSER_EXECUTABLE:-}" ] && [ -z "${PROXY_BROWSER_CDP_ENDPOINT:-}" ]; then
	found=
	for b in chromium chromium-browser google-chrome google-chrome-stable; do
		if command -v "$b" >/dev/null 2>&1; then found=$b; break; fi
	done
	[ -n "$found" ] || apt_install chromium
fi

go mod download
