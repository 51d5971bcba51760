#!/usr/bin/env bash
# Runs hauld in the foreground on the session bus; starts a private session bus when there is none.
set -euo pipefail

hauld=${1:?usage: run-daemon.sh PATH-TO-HAULD}

have_bus() {
  if [ -n "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then return 0; fi
  [ -n "${XDG_RUNTIME_DIR:-}" ] && [ -S "$XDG_RUNTIME_DIR/bus" ]
}

if have_bus; then
  exec "$hauld"
fi

dir="/tmp/haul-session-$(id -u)"
mkdir -p "$dir"
chmod 700 "$dir"
rm -f "$dir/bus"
dbus-daemon --session --nofork --address="unix:path=$dir/bus" 2>/dev/null &
bus_pid=$!
trap 'kill "$bus_pid" 2>/dev/null' EXIT
for _ in $(seq 100); do [ -S "$dir/bus" ] && break; sleep 0.05; done
export DBUS_SESSION_BUS_ADDRESS="unix:path=$dir/bus"
cat >&2 <<MSG
haul: no session bus was running, so a private one was started for this run.
haul: in another terminal, first run:
        export DBUS_SESSION_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS
MSG
"$hauld"
