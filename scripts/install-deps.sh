#!/usr/bin/env bash
# Installs the system packages Haul needs to build, run and test, when they are missing.
# Usage: scripts/install-deps.sh [run|test|bench|deb|lean]
set -euo pipefail

mode=${1:-run}
# command-or-file  debian-package
required=(
  "pkg-config:pkg-config"
  "dbus-daemon:dbus-daemon"
  "dbus-send:dbus-bin"
  "dbus-run-session:dbus-daemon"
)
if [ "$mode" = test ]; then
  required+=(
    "dbus-monitor:dbus-bin"
    # scripts/watchdog prints the stacks of a hung test process.
    "gdb:gdb"
    "gdbus:libglib2.0-bin"
    "busctl:systemd"
    "systemd-analyze:systemd"
    "curl:curl"
    "/usr/bin/python3:python3"
    "openssl:openssl"
    "/usr/sbin/squid:squid"
    "/usr/sbin/ip:iproute2"
    # HostTests look at screenshots: ImageMagick reads their pixels, tesseract reads their text.
    "/usr/bin/convert:imagemagick"
    "/usr/bin/identify:imagemagick"
    "tesseract:tesseract-ocr"
    # The GNOME Shell extension: its logic under gjs, and the whole in a headless gnome-shell (with dconf for its
    # settings; gsettings enables the extension).
    "gjs:gjs"
    "gnome-shell:gnome-shell"
    "gsettings:libglib2.0-bin"
    "/usr/libexec/dconf-service:dconf-service"
    # The browser hand-off (docs/browser.md): the browsers the tests drive (the extension's logic runs under gjs).
    "/usr/bin/chromium:chromium"
    "/usr/bin/firefox-esr:firefox-esr"
    "sha256sum:coreutils"
    # The tests against a real, headless Plasma 5 (HostTests/PlasmaSession.swift): plasma-desktop too, or
    # plasmashell starts an invalid corona and shows nothing; xdotool clicks its buttons, import takes screenshots.
    "/usr/bin/plasmashell:plasma-workspace"
    "/usr/bin/knetattach:plasma-desktop"
    "/usr/bin/Xvfb:xvfb"
    "/usr/bin/xdotool:xdotool"
    "xdg-open:xdg-utils"
    "/usr/bin/import:imagemagick"
  )
fi
# The lean release build that `make deb` packages and `make bench` measures (make lean-build): binutils' nm and ar
# for scripts/link/link-with-concurrency-hooks.
case $mode in
  test | bench | deb | lean) required+=("nm:binutils" "ar:binutils") ;;
esac
# `make deb` and its test (run by `make test`): dpkg-dev's dpkg-shlibdeps and dpkg-gencontrol, binutils' strip and
# readelf, lintian; python3 runs the test's HTTP server.
if [ "$mode" = test ] || [ "$mode" = deb ]; then
  required+=(
    "dpkg-shlibdeps:dpkg-dev"
    "strip:binutils"
    "readelf:binutils"
    "lintian:lintian"
    "/usr/bin/python3:python3"
  )
fi
if [ "$mode" = bench ]; then
  # nginx serves the bench's files (haul-bench run by hand without it uses the test server and python3).
  required+=(
    "curl:curl"
    "/usr/sbin/nginx:nginx"
    "aria2c:aria2"
  )
fi

missing=()
for entry in "${required[@]}"; do
  command -v "${entry%%:*}" >/dev/null 2>&1 || missing+=("${entry##*:}")
done
# ImageProbeTests draw their text in DejaVu Sans (ImageMagick's default font comes from Ghostscript).
if [ "$mode" = test ] && [ ! -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
  missing+=(fonts-dejavu-core)
fi
# The libdbus and libgcrypt headers are found through pkg-config, not on PATH.
if ! pkg-config --exists dbus-1 2>/dev/null; then missing+=(libdbus-1-dev); fi
if ! pkg-config --exists libgcrypt 2>/dev/null; then missing+=(libgcrypt20-dev); fi
# The fake system services of the tests (scripts/fake-system-services.py) are python3-dbus on a GLib main loop.
if [ "$mode" = test ] && ! /usr/bin/python3 -c 'import dbus, gi' 2>/dev/null; then
  missing+=(python3-dbus python3-gi)
fi
# scripts/slow-sync-fs, a disk slow to sync, is fusepy's (FUSE through libfuse2).
if [ "$mode" = test ] && ! /usr/bin/python3 -c 'import fusepy' 2>/dev/null; then
  missing+=(python3-fusepy)
fi

[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)

if [ "$(id -u)" -eq 0 ]; then sudo=""
elif command -v sudo >/dev/null 2>&1; then sudo="sudo"
else
  echo "haul: missing system packages: ${missing[*]}" >&2
  echo "haul: install them as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "haul: missing system packages (Debian names): ${missing[*]}; install them with your package manager" >&2
  exit 1
fi
echo "haul: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Several installs at once (parallel builds, a second checkout) wait for the package lock instead of failing.
$sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
$sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
