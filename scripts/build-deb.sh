#!/usr/bin/env bash
# Builds the Debian package haul_<version>_<arch>.deb from a release build; `make deb` calls this.
#
#   scripts/build-deb.sh BIN_DIR OUT_DIR
#
# BIN_DIR holds hauld, haul and haul-browser-host of the lean release build (`make lean-build`: the Swift runtime
# linked in).
# The files come from scripts/install-haul.sh (PREFIX=/usr, staged with DESTDIR), the metadata from scripts/deb/:
# the version and date from its changelog, Depends from dpkg-shlibdeps (and glibc 2.36 for packed relocations).
#
# Environment: MANPAGE_TOOL, swift-argument-parser's generate-manual tool (see install-haul.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
meta=$here/deb

bin_dir=${1:?usage: build-deb.sh BIN_DIR OUT_DIR}
out_dir=${2:?usage: build-deb.sh BIN_DIR OUT_DIR}
: "${MANPAGE_TOOL:?MANPAGE_TOOL must name the generate-manual tool (make deb builds it)}"

say() { printf 'haul: %s\n' "$*"; }
die() { printf 'haul: %s\n' "$*" >&2; exit 1; }

umask 022
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
doc=$root/usr/share/doc/haul

# The browsers' host manifests, in the system-wide folders each browser reads (dpkg keeps them as conffiles).
host_manifests="etc/chromium/native-messaging-hosts/org.haul.haul.json
etc/opt/chrome/native-messaging-hosts/org.haul.haul.json usr/lib/mozilla/native-messaging-hosts/org.haul.haul.json"

# Every file under the root: the programs and what install-haul.sh makes for them. USERNS_COMPAT=no: the build
# machine's kernel says nothing about the one the package lands on, and Debian allows unprivileged user namespaces.
PREFIX=/usr DESTDIR=$root USERNS_COMPAT=no MANPAGE=auto ZSHCOMPDIR=/usr/share/zsh/vendor-completions \
    "$here/install-haul.sh" install "$bin_dir"
for file in usr/bin/hauld usr/bin/haul usr/lib/systemd/user/hauld.service \
    usr/share/dbus-1/services/org.haul.Haul1.service usr/share/dbus-1/interfaces/org.haul.Haul1.xml \
    usr/share/bash-completion/completions/haul usr/share/zsh/vendor-completions/_haul \
    usr/share/fish/vendor_completions.d/haul.fish usr/share/man/man1/haul.1 usr/share/man/man1/hauld.1 \
    usr/share/icons/hicolor/scalable/apps/haul.svg usr/share/icons/hicolor/scalable/apps/haul-busy.svg \
    usr/share/gnome-shell/extensions/haul@haul.org/metadata.json \
    usr/libexec/haul/haul-browser-host $host_manifests usr/share/haul/browser-extension/manifest.json; do
    # install-haul.sh only warns when it cannot make a completion or a man page; a package must have them all.
    [ -f "$root/$file" ] || die "install-haul.sh made no /$file"
done

# Debian policy: man pages and the changelog compressed without a timestamp, binaries without debugging symbols
# (what dh_strip removes from an executable; .dynsym stays, so the executor hook is still found with dlsym).
gzip -9n "$root"/usr/share/man/man1/*.1
# bash-completion sources the script; swift-argument-parser's first line (#!/bin/bash) would suggest running it.
sed -i '1{/^#!/d}' "$root/usr/share/bash-completion/completions/haul"
programs=("$root/usr/bin/hauld" "$root/usr/bin/haul" "$root/usr/libexec/haul/haul-browser-host")
strip --remove-section=.comment --remove-section=.note "${programs[@]}"
install -D -m 644 "$meta/copyright" "$doc/copyright"
gzip -9n -c "$meta/changelog" >"$doc/changelog.Debian.gz"
chmod 644 "$doc/changelog.Debian.gz"
install -D -m 644 "$meta/lintian-overrides" "$root/usr/share/lintian/overrides/haul"

# dpkg-shlibdeps and dpkg-gencontrol work on a source tree's debian/ folder: give them one with our metadata.
mkdir -p "$work/src/debian" "$root/DEBIAN"
cp "$meta/control" "$meta/changelog" "$work/src/debian/"
(
    cd "$work/src"
    dpkg-shlibdeps -Tdebian/substvars "${programs[@]}"
    # Programs whose relative relocations are packed (DT_RELR, when the build machine's glibc reads them) name the
    # version GLIBC_ABI_DT_RELR, glibc 2.36, without a symbol of it. dpkg-shlibdeps reads only the versions of
    # symbols, whose newest may be older (2.35): without this, apt would install the package where ld.so refuses
    # to run its programs. dpkg-gencontrol keeps the stricter of the two libc6 versions.
    relr=""
    if grep -q 'Name: GLIBC_ABI_DT_RELR' <<<"$(readelf --version-info "${programs[@]}")"; then
        relr="libc6 (>= 2.36)"
    fi
    echo "relr:Depends=$relr" >>debian/substvars
    dpkg-gencontrol -phaul -P"$root" -Tdebian/substvars -fdebian/files
)
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
# Every file below /etc is a conffile: dpkg keeps the administrator's changes on upgrade.
(cd "$root" && find etc -type f | LC_ALL=C sort | sed 's|^|/|') >"$root/DEBIAN/conffiles"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums" "$root/DEBIAN/conffiles"
chmod 755 "$root"

version=$(dpkg-parsechangelog -l "$meta/changelog" -S Version)
arch=$(dpkg --print-architecture)
deb=$out_dir/haul_${version}_${arch}.deb
mkdir -p "$out_dir"
# File times are the changelog's date, not the build's.
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l "$meta/changelog" -S Timestamp) \
    dpkg-deb --build --root-owner-group "$root" "$deb" >/dev/null
say "built $deb ($(du -k "$deb" | cut -f1) KiB); Depends: $(dpkg-deb -f "$deb" Depends)"
