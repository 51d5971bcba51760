#!/usr/bin/env bash
# Tests the Debian package that `make deb` built, as a machine without Swift would get it: unpacked into a
# temporary root (not installed), its programs must need no Swift library from outside, lintian must pass, and the
# unpacked hauld and haul must carry a download through on a private bus. `make test` runs this after `make deb`.
#
#   scripts/test-deb.sh haul_<version>_<arch>.deb
#
# Prints one line per check and a summary; exits non-zero when a check failed. Leaves nothing behind.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
deb=${1:?usage: test-deb.sh haul_<version>_<arch>.deb}
[ -f "$deb" ] || { echo "haul: $deb does not exist (make deb builds it)" >&2; exit 1; }

work=$(mktemp -d)
root=$work/root
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
pass() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
fail() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/      /'; }
# check NAME COMMAND...: passes when the command succeeds; its output is shown when it fails.
check() {
    local name=$1 output
    shift
    if output=$("$@" 2>&1); then pass "$name"; else fail "$name" "$output"; fi
}

dpkg-deb -x "$deb" "$root"

# --- Contents -----------------------------------------------------------------------------------------------------
for file in usr/bin/hauld usr/bin/haul usr/lib/systemd/user/hauld.service \
    usr/share/dbus-1/services/org.haul.Haul1.service usr/share/dbus-1/interfaces/org.haul.Haul1.xml \
    usr/share/bash-completion/completions/haul usr/share/zsh/vendor-completions/_haul \
    usr/share/fish/vendor_completions.d/haul.fish usr/share/man/man1/haul.1.gz usr/share/man/man1/hauld.1.gz \
    usr/share/doc/haul/copyright usr/share/doc/haul/changelog.Debian.gz usr/share/lintian/overrides/haul \
    usr/libexec/haul/haul-browser-host; do
    check "ships /$file" test -s "$root/$file"
done
# The browser hand-off: the host's manifest where each browser looks system-wide, naming the packaged host and the
# extension's fixed id; the extension's files as the repository has them.
extension=$here/../integrations/browser/extension
for manifest in etc/chromium/native-messaging-hosts etc/opt/chrome/native-messaging-hosts \
    usr/lib/mozilla/native-messaging-hosts; do
    file=$root/$manifest/org.haul.haul.json
    check "ships /$manifest/org.haul.haul.json, naming /usr/libexec/haul/haul-browser-host" \
        python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); assert m["name"] == "org.haul.haul" and \
m["path"] == "/usr/libexec/haul/haul-browser-host" and m["type"] == "stdio", m' "$file"
done
check "dpkg keeps the manifests below /etc as conffiles" bash -c \
    'dpkg-deb -I "$1" conffiles | grep -qx /etc/chromium/native-messaging-hosts/org.haul.haul.json' _ "$deb"
for file in "$extension"/*; do
    check "ships the extension's $(basename "$file")" \
        cmp "$file" "$root/usr/share/haul/browser-extension/$(basename "$file")"
done
check "the activation file starts /usr/bin/hauld through hauld.service" \
    grep -qx 'Exec=/usr/bin/hauld' "$root/usr/share/dbus-1/services/org.haul.Haul1.service"
check "the activation file names hauld.service" \
    grep -qx 'SystemdService=hauld.service' "$root/usr/share/dbus-1/services/org.haul.Haul1.service"
check "the user unit runs /usr/bin/hauld" grep -qx 'ExecStart=/usr/bin/hauld' "$root/usr/lib/systemd/user/hauld.service"
# The GNOME Shell extension: both forms (ES modules for GNOME 45 and later, legacy/ for 43 and 44), world-readable.
extension=usr/share/gnome-shell/extensions/haul@haul.org
for file in metadata.json extension.js __init__.js model.js legacy/session.js legacy/model.js; do
    check "ships /$extension/$file" test -s "$root/$extension/$file"
done
check "the extension's metadata names haul@haul.org and GNOME Shell 43 to 50" python3 -c '
import json, sys
metadata = json.load(open(sys.argv[1]))
assert metadata["uuid"] == "haul@haul.org", metadata["uuid"]
assert metadata["shell-version"] == [str(v) for v in range(43, 51)], metadata["shell-version"]' \
    "$root/$extension/metadata.json"
check "the extension's files are readable by everyone" \
    bash -c '[ -z "$(find "$1" \( -type f ! -perm -444 \) -o \( -type d ! -perm -555 \))" ]' _ "$root/$extension"
check "the interface XML is the repository's" cmp "$here/../dbus/org.haul.Haul1.xml" \
    "$root/usr/share/dbus-1/interfaces/org.haul.Haul1.xml"
for icon in scalable/apps/haul.svg scalable/apps/haul-busy.svg symbolic/apps/haul-symbolic.svg \
    symbolic/apps/haul-busy-symbolic.svg; do
    check "ships the icon /usr/share/icons/hicolor/$icon, the repository's" \
        cmp "$here/../integrations/icons/hicolor/$icon" "$root/usr/share/icons/hicolor/$icon"
done

depends=$(dpkg-deb -f "$deb" Depends)
check "Depends names libdbus-1-3 and libgcrypt20 (from dpkg-shlibdeps: $depends)" \
    bash -c '[[ "$1" == *libdbus-1-3* && "$1" == *libgcrypt20* && "$1" != *swift* ]]' _ "$depends"

# --- Libraries: nothing from the Swift toolchain, everything from a Debian package ------------------------------
swift_libraries='libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime'
for binary in "$root/usr/bin/hauld" "$root/usr/bin/haul" "$root/usr/libexec/haul/haul-browser-host"; do
    program=$(basename "$binary")
    libraries=$(ldd "$binary")
    check "$program needs no Swift library" bash -c '! grep -E "$1" <<<"$2"' _ "$swift_libraries" "$libraries"
    check "$program finds every library it needs" bash -c '! grep "not found" <<<"$1"' _ "$libraries"
    # Each library ldd resolves belongs to an installed Debian package (not to /opt/swift or /usr/local).
    unowned=""
    while read -r path; do
        dpkg -S "$path" >/dev/null 2>&1 || dpkg -S "$(readlink -f "$path")" >/dev/null 2>&1 || unowned+="$path "
    done < <(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$libraries")
    check "$program's libraries all come from Debian packages" test -z "$unowned"
done

# NIO finds Swift concurrency's hook with dlsym; a static runtime exports it only when the link asks for it.
check "hauld exports swift_task_enqueueGlobal_hook for NIO's executor" \
    bash -c 'nm -D --defined-only "$1" | grep -qw swift_task_enqueueGlobal_hook' _ "$root/usr/bin/hauld"
# The package holds the lean build that make bench measures (see the Makefile): its programs export nothing else.
for binary in "$root/usr/bin/hauld" "$root/usr/bin/haul" "$root/usr/libexec/haul/haul-browser-host"; do
    program=$(basename "$binary")
    others=$(nm -D --defined-only "$binary" | awk '$NF !~ /^swift_task_/ { print $NF }' | xargs)
    check "$program exports Swift concurrency's hooks only (scripts/link/exports.map)${others:+; also: $others}" \
        test -z "$others"
done
# Packed relative relocations (DT_RELR) need glibc 2.36, which dpkg-shlibdeps does not see (scripts/build-deb.sh).
if grep -q 'Name: GLIBC_ABI_DT_RELR' <<<"$(readelf --version-info "$root/usr/bin/hauld")"; then
    libc=$(sed -n 's/.*libc6 (>= \([^)]*\)).*/\1/p' <<<"$depends")
    check "Depends asks for the glibc that reads packed relocations, 2.36 or later (libc6 >= ${libc:-none})" \
        dpkg --compare-versions "${libc:-0}" ge 2.36
fi

# --- lintian: errors and warnings fail (the package's overrides say why each override is there) -----------------
if output=$(lintian --fail-on error,warning "$deb" 2>&1); then
    pass "lintian: no errors or warnings"
else
    fail "lintian: no errors or warnings" "$output"
fi

# --- The unpacked programs on a private bus, downloading from loopback -----------------------------------------
mkdir -p "$work/bus" "$work/home" "$work/state" "$work/www" "$work/uploads" "$work/downloads"
cat >"$work/bus/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/bus/socket</listen>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
dbus-daemon --config-file="$work/bus/bus.conf" --nofork --print-address=1 >"$work/bus/address" 2>"$work/bus/log" &
pids+=($!)
python3 "$here/test-http-server" --root "$work/www" --upload-dir "$work/uploads" >"$work/http.out" &
pids+=($!)
for _ in $(seq 100); do
    [ -s "$work/bus/address" ] && grep -q '^PORT ' "$work/http.out" && break
    sleep 0.1
done
address=$(head -n 1 "$work/bus/address")
port=$(sed -n 's/^PORT //p' "$work/http.out")
[ -n "$address" ] && [ -n "$port" ] || { echo "haul: the private bus or the HTTP server did not start" >&2; exit 1; }

# A clean environment: this bus only, state under the temporary folder, no proxy variables, no journal. (An array,
# not a function: a function run in the background is a subshell, and $! would be its process, not hauld's.)
# No XDG data folder has Haul's icons: the unpacked hauld finds them beside itself.
run=(env -i PATH=/usr/bin:/bin HOME="$work/home" XDG_STATE_HOME="$work/state" XDG_DATA_DIRS="$work/data"
    DBUS_SESSION_BUS_ADDRESS="$address")
"${run[@]}" "$root/usr/bin/hauld" 2>"$work/hauld.log" &
hauld=$!
pids+=("$hauld")
owned=no
for _ in $(seq 200); do
    reply=$("${run[@]}" dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner string:org.haul.Haul1 2>/dev/null || true)
    if [[ "$reply" == *"boolean true"* ]]; then
        owned=yes
        break
    fi
    kill -0 "$hauld" 2>/dev/null || break
    sleep 0.1
done
check "the unpacked hauld takes org.haul.Haul1" test "$owned" = yes
check "the process watched below is the unpacked hauld" test "$(readlink "/proc/$hauld/exe")" = "$root/usr/bin/hauld"
check "hauld runs Swift concurrency on NIO's event loops (no fallback in its log)" \
    bash -c '! grep -F "stays on libdispatch" "$1"' _ "$work/hauld.log"
# hauld logs its tray icon's connection ("tray icon at :1.N /StatusNotifierItem") once it is exported.
for _ in $(seq 50); do grep -q 'tray icon at ' "$work/hauld.log" && break; sleep 0.1; done
tray=$(sed -n 's/.*tray icon at \(:[0-9.]*\) .*/\1/p' "$work/hauld.log" | head -n 1)
theme_path=$("${run[@]}" dbus-send --session --print-reply --dest="${tray:-:0.0}" /StatusNotifierItem \
    org.freedesktop.DBus.Properties.Get string:org.kde.StatusNotifierItem string:IconThemePath 2>&1 || true)
check "the tray icon's IconThemePath is the unpacked /usr/share/icons" \
    bash -c '[[ "$1" == *"string \"$2\""* ]]' _ "$theme_path" "$root/usr/share/icons"

head -c $((24 * 1024 * 1024 + 12345)) /dev/urandom >"$work/www/payload.bin"
sha256=$(sha256sum "$work/www/payload.bin" | cut -d ' ' -f 1)
check "the unpacked haul downloads through hauld (checksum verified by hauld)" \
    "${run[@]}" "$root/usr/bin/haul" get "http://127.0.0.1:$port/files/payload.bin" -o "$work/downloads/payload.bin" \
    --sha256 "$sha256"
check "the downloaded file is byte for byte the served one" cmp "$work/www/payload.bin" "$work/downloads/payload.bin"
check "haul status answers" "${run[@]}" "$root/usr/bin/haul" status

# The unpacked host, as a browser runs it: a malformed message gets an error answer; the withdrawal of a task hauld
# does not have reaches hauld on the bus, and comes back as hauld's refusal.
host_says() { # message → "ok error" of the host's answer
    python3 -c 'import struct, sys; m = sys.argv[1].encode(); sys.stdout.buffer.write(struct.pack("=I", len(m)) + m)' \
        "$1" >"$work/frame"
    "${run[@]}" "$root/usr/libexec/haul/haul-browser-host" <"$work/frame" | python3 -c 'import json, struct, sys
data = sys.stdin.buffer.read()
answer = json.loads(data[4:4 + struct.unpack("=I", data[:4])[0]])
print(answer["ok"], answer.get("error"))'
}
check "the unpacked host answers a malformed message with an error" \
    test "$(host_says '{"type": 7}')" = "False org.haul.haul.Malformed"
check "the unpacked host reaches hauld on the bus" \
    test "$(host_says '{"type": "withdraw", "task": "/org/haul/Haul1/Tasks/4242"}')" \
    = "False org.freedesktop.DBus.Error.UnknownObject"

# What the executor is there for: on libdispatch's pool an idle hauld wakes every second once any job ran there.
# libdispatch ends a serial queue's idle worker thread after 5 s (the bus connection's, the task writer's): wait.
context_switches() { # pid → "tid count" per thread alive now
    local status
    for status in /proc/"$1"/task/*/status; do
        awk -v tid="$(basename "$(dirname "$status")")" \
            '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print tid, n }' "$status" 2>/dev/null || true
    done
}
sleep 6
context_switches "$hauld" >"$work/switches.before"
sleep 3
context_switches "$hauld" >"$work/switches.after"
# Wake-ups of threads alive at both readings, plus all of threads started in between.
wakeups=$(awk 'NR == FNR { before[$1] = $2; next } { total += $2 - before[$1] } END { print total + 0 }' \
    "$work/switches.before" "$work/switches.after")
check "the idle hauld does not wake in 3 s ($wakeups context switches)" \
    bash -c '[ -s "$1" ] && [ "$2" -eq 0 ]' _ "$work/switches.after" "$wakeups"

kill -TERM "$hauld"
status=0
wait "$hauld" || status=$?
check "hauld exits 0 on SIGTERM" test "$status" -eq 0
if [ "$failed" -ne 0 ]; then
    echo "hauld's log:"
    sed 's/^/      /' "$work/hauld.log"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
