#!/bin/sh
# Starts Chromium ($PWPROXY_CHROMIUM) for the browser server with every
# --disable-features=... switch merged into one. Chromium keeps only the last
# of a repeated switch and Playwright puts its own list first, so without
# this the proxy's list (chromiumFlags) silently replaces Playwright's.
# exec keeps the pid and the inherited descriptors (--remote-debugging-pipe).
disabled=
for arg do
	shift
	case $arg in
	--disable-features=*) disabled=${disabled:+$disabled,}${arg#--disable-features=} ;;
	*) set -- "$@" "$arg" ;;
	esac
done
if [ -n "$disabled" ]; then
	set -- "$@" "--disable-features=$disabled"
fi
exec "$PWPROXY_CHROMIUM" "$@"
