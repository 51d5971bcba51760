#!/usr/bin/env bash
# Installs Haul below $PREFIX, or removes it again; `make install` / `make uninstall` call this.
#
#   scripts/install-haul.sh install BIN_DIR   BIN_DIR holds the built hauld, haul and haul-browser-host (release build)
#   scripts/install-haul.sh uninstall
#
# Environment:
#   PREFIX          where Haul goes (default /usr/local); an absolute path
#   DESTDIR         staging root for packagers: files go to $DESTDIR$PREFIX/…, paths inside them say $PREFIX/…
#   USERUNITDIR     the systemd user unit folder (default $PREFIX/lib/systemd/user, or
#                   $PREFIX/share/systemd/user when PREFIX is inside $HOME: systemd does not search
#                   ~/.local/lib/systemd/user)
#   ZSHCOMPDIR      the zsh completion folder (default $PREFIX/share/zsh/site-functions; Debian's zsh
#                   searches /usr/share/zsh/vendor-completions for packages instead)
#   CHROMIUM_HOSTDIR, CHROME_HOSTDIR, FIREFOX_HOSTDIR
#                   where Chromium, Google Chrome and Firefox find the native-messaging host's manifest:
#                   by default the system-wide folders /etc/chromium/native-messaging-hosts,
#                   /etc/opt/chrome/native-messaging-hosts and /usr/lib/mozilla/native-messaging-hosts (outside
#                   PREFIX: the browsers look nowhere else), or, when PREFIX is inside $HOME, the user's own
#                   ~/.config/chromium/NativeMessagingHosts, ~/.config/google-chrome/NativeMessagingHosts and
#                   ~/.mozilla/native-messaging-hosts
#   USERNS_COMPAT   auto (default): add hauld.service.d/10-userns-restricted.conf when this kernel restricts
#                   unprivileged user namespaces; yes / no: always / never
#   MANPAGE         auto (default): generate haul.1 and hauld.1 with swift-argument-parser's generate-manual
#                   plugin; no: skip them
#   MANPAGE_TOOL    swift-argument-parser's generate-manual tool, built already: run it on BIN_DIR's programs
#                   instead of the plugin, which rebuilds every product with SWIFT_FLAGS alone (`make deb` builds
#                   with options that `swift package` does not take)
#   SWIFT, SWIFT_FLAGS   the swift command and extra package options (e.g. --scratch-path DIR) for the plugin
#
# The unit and the D-Bus activation file name /usr/local/bin/hauld; it is rewritten to $PREFIX/bin/hauld. The
# browsers' host manifests name /usr/local/libexec/haul/haul-browser-host, rewritten to $PREFIX/libexec/haul/….
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")

action=${1:-}
PREFIX=${PREFIX:-/usr/local}
PREFIX=${PREFIX%/}
DESTDIR=${DESTDIR:-}
SWIFT=${SWIFT:-swift}
SWIFT_FLAGS=${SWIFT_FLAGS:-}
USERNS_COMPAT=${USERNS_COMPAT:-auto}
MANPAGE=${MANPAGE:-auto}

say() { printf 'haul: %s\n' "$*"; }
die() { printf 'haul: %s\n' "$*" >&2; exit 1; }

case "$PREFIX" in
  /*) ;;
  *) die "PREFIX must be an absolute path (got '$PREFIX')" ;;
esac

bindir=$PREFIX/bin
datadir=$PREFIX/share
libexecdir=$PREFIX/libexec/haul
per_user=no
case "$PREFIX/" in
  "${HOME:-/nonexistent}"/*) per_user=yes ;;
esac
if [ -z "${USERUNITDIR:-}" ]; then
  if [ "$per_user" = yes ]; then USERUNITDIR=$datadir/systemd/user; else USERUNITDIR=$PREFIX/lib/systemd/user; fi
fi
if [ "$per_user" = yes ]; then
  config_home=${XDG_CONFIG_HOME:-$HOME/.config}
  CHROMIUM_HOSTDIR=${CHROMIUM_HOSTDIR:-$config_home/chromium/NativeMessagingHosts}
  CHROME_HOSTDIR=${CHROME_HOSTDIR:-$config_home/google-chrome/NativeMessagingHosts}
  FIREFOX_HOSTDIR=${FIREFOX_HOSTDIR:-$HOME/.mozilla/native-messaging-hosts}
else
  CHROMIUM_HOSTDIR=${CHROMIUM_HOSTDIR:-/etc/chromium/native-messaging-hosts}
  CHROME_HOSTDIR=${CHROME_HOSTDIR:-/etc/opt/chrome/native-messaging-hosts}
  FIREFOX_HOSTDIR=${FIREFOX_HOSTDIR:-/usr/lib/mozilla/native-messaging-hosts}
fi
dropindir=$USERUNITDIR/hauld.service.d

# Everything install may put in place (uninstall removes exactly these).
unit=$USERUNITDIR/hauld.service
dropin=$dropindir/10-userns-restricted.conf
activation=$datadir/dbus-1/services/org.haul.Haul1.service
interface=$datadir/dbus-1/interfaces/org.haul.Haul1.xml
bash_completion=$datadir/bash-completion/completions/haul
zsh_completion=${ZSHCOMPDIR:-$datadir/zsh/site-functions}/_haul
fish_completion=$datadir/fish/vendor_completions.d/haul.fish
mandir=$datadir/man/man1
browser_host=$libexecdir/haul-browser-host
host_manifest=org.haul.haul.json
extensiondir=$datadir/haul/browser-extension
extension_files=(manifest.json background.js policy.js options.html options.js)
# The GNOME Shell extension, a folder of its own (integrations/gnome-shell/assemble.sh makes it).
gnome_extension=$datadir/gnome-shell/extensions/haul@haul.org
# Haul's icons in the hicolor theme, as integrations/icons/hicolor holds them (the tray icon, KDE jobs and
# notifications name them; hauld run from elsewhere finds them beside itself).
icondir=$datadir/icons/hicolor
icons=(scalable/apps/haul.svg scalable/apps/haul-busy.svg symbolic/apps/haul-symbolic.svg
  symbolic/apps/haul-busy-symbolic.svg)
all_files=(
  "$bindir/hauld" "$bindir/haul" "$unit" "$dropin" "$activation" "$interface"
  "$bash_completion" "$zsh_completion" "$fish_completion" "$mandir/haul.1" "$mandir/hauld.1"
  "$browser_host" "$CHROMIUM_HOSTDIR/$host_manifest" "$CHROME_HOSTDIR/$host_manifest"
  "$FIREFOX_HOSTDIR/$host_manifest" "${icons[@]/#/$icondir/}"
)
for file in "${extension_files[@]}"; do all_files+=("$extensiondir/$file"); done

# Where unprivileged user namespaces cannot be used to drop capabilities, a per-user systemd fails
# hauld.service with status=218/CAPABILITIES (see systemd/userns-restricted.conf).
userns_restricted() {
  [ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null)" = 1 ] && return 0
  [ "$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null)" = 0 ] && return 0
  [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null)" = 0 ] && return 0
  return 1
}

# Copies a file whose ExecStart= or Exec= line names /usr/local/bin/hauld, naming $bindir/hauld instead.
# $2 is systemd or dbus: how a path with spaces or % is quoted there.
install_rewritten() {
  local source=$1 syntax=$2 target=$3 exec=$bindir/hauld
  if [ "$syntax" = systemd ]; then exec=${exec//%/%%}; fi
  case "$exec" in
    *[[:space:]]*) exec="\"$exec\"" ;;
  esac
  # Escape what sed's replacement treats specially: backslash, the | delimiter and &.
  local replacement
  replacement=$(printf '%s' "$exec" | sed -e 's/[\\|&]/\\&/g')
  local tmp
  tmp=$(mktemp)
  sed -e "/^Exec\(Start\)\{0,1\}=/s|/usr/local/bin/hauld|$replacement|" "$source" >"$tmp"
  install -D -m 644 "$tmp" "$DESTDIR$target"
  rm -f "$tmp"
  say "installed $DESTDIR$target"
}

# Copies a browser's manifest of the native-messaging host, naming $browser_host instead of the default location
# (escaped for JSON, then for sed's replacement).
install_host_manifest() { # source target
  local json replacement tmp
  json=$(printf '%s' "$browser_host" | sed -e 's/[\\"]/\\&/g')
  replacement=$(printf '%s' "$json" | sed -e 's/[\\|&]/\\&/g')
  tmp=$(mktemp)
  sed -e "s|\"/usr/local/libexec/haul/haul-browser-host\"|\"$replacement\"|" "$1" >"$tmp"
  install -D -m 644 "$tmp" "$DESTDIR$2"
  rm -f "$tmp"
  say "installed $DESTDIR$2"
}

install_file() { # mode source target
  install -D -m "$1" "$2" "$DESTDIR$3"
  say "installed $DESTDIR$3"
}

# Completion scripts from swift-argument-parser; a haul that cannot make one (it prints something else)
# leaves that shell without completion rather than with a broken file.
install_completion() { # shell marker target
  local shell=$1 marker=$2 target=$3 tmp
  tmp=$(mktemp)
  if "$bin_dir/haul" --generate-completion-script "$shell" >"$tmp" 2>/dev/null && grep -q -- "$marker" "$tmp"; then
    install -D -m 644 "$tmp" "$DESTDIR$target"
    say "installed $DESTDIR$target"
  else
    say "warning: 'haul --generate-completion-script $shell' gave no $shell completion; skipped" >&2
  fi
  rm -f "$tmp"
}

# Man pages from swift-argument-parser's generate-manual plugin (it builds every product in release
# mode, which `make install` has just done, then writes one page per ArgumentParser executable).
install_manpages() {
  if [ -n "${MANPAGE_TOOL:-}" ]; then
    install_manpages_with_tool
    return 0
  fi
  local log
  log=$(mktemp)
  # shellcheck disable=SC2086 # SWIFT_FLAGS is a list of options
  if ! (cd "$root" && "$SWIFT" package $SWIFT_FLAGS plugin generate-manual) >"$log" 2>&1; then
    say "warning: the generate-manual plugin failed; no man pages installed (MANPAGE=no skips this):" >&2
    tail -n 5 "$log" >&2
    rm -f "$log"
    return 0
  fi
  local page name dir
  # "Generated manual in 'file:///…/outputs/haul'"
  while IFS= read -r dir; do
    for name in haul hauld; do
      page=$dir/$name.1
      if [ -f "$page" ]; then install_file 644 "$page" "$mandir/$name.1"; fi
    done
  done < <(sed -n "s|^Generated manual in 'file://\(.*\)'\$|\1|p" "$log" | sed 's|/$||')
  rm -f "$log"
}

install_manpages_with_tool() {
  local out name
  out=$(mktemp -d)
  for name in haul hauld; do
    if "$MANPAGE_TOOL" "$bin_dir/$name" --output-directory "$out" >/dev/null && [ -f "$out/$name.1" ]; then
      install_file 644 "$out/$name.1" "$mandir/$name.1"
    else
      say "warning: $MANPAGE_TOOL made no $name.1; not installed" >&2
    fi
  done
  rm -rf "$out"
}

case "$action" in
  install)
    bin_dir=${2:?usage: install-haul.sh install BIN_DIR}
    for program in hauld haul haul-browser-host; do
      [ -x "$bin_dir/$program" ] || die "$bin_dir/$program is missing: build first (make install does)"
    done
    [ -f "$root/dbus/org.haul.Haul1.xml" ] || die "dbus/org.haul.Haul1.xml is missing"

    install_file 755 "$bin_dir/hauld" "$bindir/hauld"
    install_file 755 "$bin_dir/haul" "$bindir/haul"
    install_rewritten "$root/systemd/hauld.service" systemd "$unit"
    install_rewritten "$root/dbus/org.haul.Haul1.service" dbus "$activation"
    install_file 644 "$root/dbus/org.haul.Haul1.xml" "$interface"
    for icon in "${icons[@]}"; do install_file 644 "$root/integrations/icons/hicolor/$icon" "$icondir/$icon"; done
    # GTK reads a stale icon cache as it is: refresh one that is there (Debian's packages do it by trigger).
    if [ -z "$DESTDIR" ] && [ -f "$icondir/icon-theme.cache" ] && command -v gtk-update-icon-cache >/dev/null; then
      gtk-update-icon-cache -q -f -t "$icondir" || say "warning: could not refresh $icondir/icon-theme.cache" >&2
    fi

    # The browsers' hand-off (docs/browser.md): the native-messaging host, its manifest for each browser, and the
    # extension's files for the user to add to the browser.
    install_file 755 "$bin_dir/haul-browser-host" "$browser_host"
    install_host_manifest "$root/integrations/browser/native-messaging/chromium.json" "$CHROMIUM_HOSTDIR/$host_manifest"
    install_host_manifest "$root/integrations/browser/native-messaging/chromium.json" "$CHROME_HOSTDIR/$host_manifest"
    install_host_manifest "$root/integrations/browser/native-messaging/firefox.json" "$FIREFOX_HOSTDIR/$host_manifest"
    for file in "$root"/integrations/browser/extension/*; do
      case " ${extension_files[*]} " in
        *" $(basename "$file") "*) ;;
        *) die "integrations/browser/extension/$(basename "$file") is missing from extension_files" ;;
      esac
    done
    for file in "${extension_files[@]}"; do
      install_file 644 "$root/integrations/browser/extension/$file" "$extensiondir/$file"
    done

    compat=no
    case "$USERNS_COMPAT" in
      yes) compat=yes ;;
      no) ;;
      auto) if userns_restricted; then compat=yes; fi ;;
      *) die "USERNS_COMPAT must be auto, yes or no (got '$USERNS_COMPAT')" ;;
    esac
    if [ "$compat" = yes ]; then
      install_file 644 "$root/systemd/userns-restricted.conf" "$dropin"
      say "this kernel restricts unprivileged user namespaces: hauld.service runs with the reduced sandbox of $(basename "$dropin")"
    else
      rm -f "$DESTDIR$dropin"
      rmdir "$DESTDIR$dropindir" 2>/dev/null || true
    fi

    # Replaced as a whole, so that no file of an older version stays behind.
    rm -rf "${DESTDIR:?}$gnome_extension"
    "$root/integrations/gnome-shell/assemble.sh" "$DESTDIR$gnome_extension"
    chmod 755 "$DESTDIR$gnome_extension" "$DESTDIR$gnome_extension/legacy"
    say "installed $DESTDIR$gnome_extension/"

    install_completion bash "complete" "$bash_completion"
    install_completion zsh "#compdef haul" "$zsh_completion"
    install_completion fish "complete -c" "$fish_completion"

    case "$MANPAGE" in
      no) ;;
      auto) install_manpages ;;
      *) die "MANPAGE must be auto or no (got '$MANPAGE')" ;;
    esac

    if [ -z "$DESTDIR" ]; then
      cat <<MSG
haul: done. The first call to org.haul.Haul1 (haul status, dbus-send …) starts hauld through D-Bus
haul: activation. To run it from login on, with systemd:
haul:     systemctl --user daemon-reload && systemctl --user enable --now hauld
MSG
      say "on GNOME, turn on the top bar's indicator with: gnome-extensions enable haul@haul.org"
      say "(GNOME Shell finds a newly installed extension after you log out and in again)"
      case ":${PATH:-}:" in
        *":$bindir:"*) ;;
        *) say "note: $bindir is not on PATH" ;;
      esac
    fi
    ;;
  uninstall)
    if [ -z "$DESTDIR" ] && [ -f "$unit" ]; then
      say "if hauld runs under systemd, first: systemctl --user disable --now hauld"
    fi
    for file in "${all_files[@]}"; do
      if [ -e "$DESTDIR$file" ] || [ -L "$DESTDIR$file" ]; then
        rm -f "$DESTDIR$file"
        say "removed $DESTDIR$file"
      fi
    done
    rmdir "$DESTDIR$dropindir" "$DESTDIR$libexecdir" "$DESTDIR$extensiondir" "$DESTDIR$datadir/haul" \
      2>/dev/null || true
    if [ -d "$DESTDIR$gnome_extension" ]; then
      rm -rf "${DESTDIR:?}$gnome_extension"
      say "removed $DESTDIR$gnome_extension/"
    fi
    ;;
  *)
    die "usage: install-haul.sh install BIN_DIR | uninstall"
    ;;
esac
