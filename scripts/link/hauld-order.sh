#!/usr/bin/env bash
# Remakes scripts/link/hauld.order, the order in which the lean release build (make deb, make bench) lays out
# hauld's functions: first those hauld runs to start and wait, then those of a typical use, found by running it
# under valgrind's callgrind.
#
#   scripts/link/hauld-order.sh [--append] BIN_DIR
#
# --append keeps the order there is and adds the functions it lacks after it, so that the layout moves only where
# the code did. A whole new order packs the start-up tighter but moves what a barrage of hostile calls touches: on
# 2026-11-27 it gave a fresh hauld 14.3 MB and 20.0-20.3 MB after the barrage (+5.7 to +6.0 MB), the appended one
# 14.6-15.0 and 19.9-20.2 MB (+5.1 to +5.3 MB). Appended functions land after all the others, though: two rounds
# later (the Swift marshalling, the queue's specializations) an appended order gave 15.8 and 21.8 MB, a whole new
# one 14.3 and 19.9 MB. Remake it whole once the appended part has grown. The whole order with the barrage's
# functions last gave 14.6-15.0 MB fresh and 18.2-18.9 MB a minute after the barrage (+3.5 to +3.9 MB), where the
# order without them gave +5.4 to +5.9 MB.
# Remade whole on 2026-12-03, when the bus connections left Dispatch for threads of their own: hauld linked in the
# order before then, a fresh one in the test set-up of that day, took 17.0 MB; in the new order 16.3 MB. The bench
# then gave 14.4 MB fresh, 19.3 MB after the load and 17.9 MB a minute after the barrage (+3.4 MB).
#
# BIN_DIR holds hauld, haul and haul-bench of that build (`make lean-build`). The use is haul's, on a private bus
# against the test suite's HTTP server: downloads on one, four and sixteen connections, thirty-two at once, two under
# a task's own limit (one on four connections) and two sharing the limit for all, a suspended one resumed, suspended
# and cancelled, a 404, an upload, the list, the indicator; then the idle minute and a half in which
# async-http-client closes the connections it kept and hauld trims its heap. Last come the functions a hostile
# barrage runs (haul-bench's abuse phase: refusals of wrong types, huge strings, hostile URLs and paths), which
# neither start-up nor a use calls: spread over the code, they kept 3.1 MB more of it resident after the barrage;
# together, after the rest, they fill a few blocks of their own. Needs valgrind and python3.
#
# Why an order: the kernel maps a program's code in 64 kB blocks around each page it touches, so the few hundred
# kB of functions an idle hauld has run, spread over 16 MB of code, kept 8 MB of it resident. Placed together, they
# fill a few blocks. Names that no longer exist are ignored by the linker; a stale file costs memory, nothing else.
set -euo pipefail

append=false
if [ "${1:-}" = --append ]; then
    append=true
    shift
fi
bin_dir=${1:?usage: hauld-order.sh [--append] BIN_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
output=$here/hauld.order
command -v valgrind >/dev/null || { echo "hauld-order.sh: needs valgrind (apt install valgrind)" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# valgrind 3.19 (Debian 12) cannot read DWARF 5: a copy without debugging information has the same symbols.
strip --strip-debug -o "$work/hauld" "$bin_dir/hauld"
haul=$bin_dir/haul

dbus-daemon --session --fork --print-address=3 --print-pid=4 3>"$work/bus" 4>"$work/bus.pid"
pids+=("$(cat "$work/bus.pid")")
export DBUS_SESSION_BUS_ADDRESS=$(cat "$work/bus")
mkdir -p "$work/www" "$work/uploads" "$work/files"
coproc server { exec python3 "$root/scripts/test-http-server" --root "$work/www" --upload-dir "$work/uploads"; }
pids+=("$server_PID")
read -r _ port <&"${server[0]}"
url=http://127.0.0.1:$port
head -c 3000000 /dev/urandom >"$work/upload.bin"

# The names of the functions in hauld a callgrind profile (its files $@) saw run, in the order first seen.
names_of() {
    # "fn=(id) name" names a function the first time it comes; ob= says in which file it is.
    python3 - "$@" <<'PYTHON'
import re, sys
names = {}
objects = {}
current = None
for path in sys.argv[1:]:
    for line in open(path, errors="replace"):
        match = re.match(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not match:
            continue
        called, kind, number, name = match.groups()
        table = objects if kind == "ob" else names
        if name is not None:
            table[number] = name
        if kind == "ob" and not called:
            current = objects[number]
        elif kind == "fn" and not called and current and current.endswith("/hauld"):
            # Recursion levels come as NAME'2; unnamed code as 0x…
            name = re.sub(r"'\d+$", "", names[number])
            if not name.startswith("0x"):
                print(name)
PYTHON
}

# Runs hauld under callgrind until `scenario` returns and $3 seconds more, then writes the names of the functions it
# ran to $1.
profile() {
    local names=$1 scenario=$2 settle=$3 hauld
    rm -rf "$work/state" "$work/files"/* "$work"/callgrind.*
    XDG_STATE_HOME=$work/state valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" \
        "$work/hauld" --log-level warning 2>"$work/valgrind.log" &
    hauld=$!
    pids+=("$hauld")
    for _ in $(seq 120); do timeout 5 "$haul" status >/dev/null 2>&1 && break; sleep 1; done
    "$scenario"
    sleep "$settle"
    callgrind_control --dump "$hauld" >/dev/null 2>&1
    kill -9 "$hauld"
    wait "$hauld" 2>/dev/null || true
    names_of "$work"/callgrind.out.* >"$names"
}

start() { "$haul" status >/dev/null; "$haul" ls >/dev/null; }

use() {
    "$haul" status >/dev/null
    "$haul" get "$url/gen/16m" -o "$work/files/one.bin" >/dev/null
    "$haul" get "$url/gen/32m" -o "$work/files/four.bin" -x 4 >/dev/null
    "$haul" get "$url/gen/64m" -o "$work/files/sixteen.bin" -x 16 >/dev/null
    local gets=()
    for n in $(seq 32); do
        "$haul" get "$url/gen/2m?seed=$n" -o "$work/files/many-$n.bin" >/dev/null &
        gets+=($!)
    done
    wait "${gets[@]}"
    # Limited: a task's own limit on one and on four connections, then two tasks sharing the limit for all.
    "$haul" get "$url/gen/12m" -o "$work/files/limited.bin" --limit-rate 4M >/dev/null
    "$haul" get "$url/gen/12m" -o "$work/files/limited-four.bin" -x 4 --limit-rate 4M >/dev/null
    "$haul" limit --download 4M >/dev/null
    "$haul" get "$url/gen/6m?seed=1" -o "$work/files/shared-1.bin" >/dev/null &
    local shared=$!
    "$haul" get "$url/gen/6m?seed=2" -o "$work/files/shared-2.bin" >/dev/null
    wait "$shared"
    "$haul" limit --download 0 >/dev/null
    local path id
    path=$("$haul" get "$url/gen/8m?throttle=1000000" -o "$work/files/slow.bin" --suspended --detach)
    id=${path##*/}
    "$haul" resume "$id" >/dev/null
    sleep 1
    "$haul" suspend "$id" >/dev/null
    "$haul" resume "$id" >/dev/null
    "$haul" cancel "$id" >/dev/null || true
    "$haul" get "$url/files/missing" -o "$work/files/missing" >/dev/null 2>&1 || true
    "$haul" put "$work/upload.bin" "$url/upload/up.bin" >/dev/null
    "$haul" ls >/dev/null
    "$haul" forget --completed >/dev/null
    "$haul" indicator >/dev/null
}

# The barrage is haul-bench's: it starts the hauld beside it, which here is a script that runs ours under callgrind
# with the same process id (a copy of the bench, not a link, which it would follow back to the real hauld). callgrind
# writes its profile when hauld ends, once the bench stops it.
barrage() {
    local bench=$work/bench
    rm -rf "$work"/callgrind.* "$bench"
    mkdir "$bench"
    cp "$bin_dir/haul-bench" "$bench/"
    cat >"$bench/hauld" <<SCRIPT
#!/bin/sh
exec valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" "$work/hauld" "\$@" \
    2>"$work/valgrind.log"
SCRIPT
    chmod +x "$bench/hauld"
    "$bench/haul-bench" --phases abuse --server python --output "$bench/figures.json" >"$bench/log" 2>&1 ||
        { cat "$bench/log" >&2; exit 1; }
    names_of "$work"/callgrind.out* >"$1"
}

profile "$work/start.names" start 3
# An idle hauld after a use has run this too, and its code stays resident: async-http-client closes the connections
# it pooled after 60 s unused, and a minute after the last transfer hauld trims its heap once more.
profile "$work/use.names" use 75
barrage "$work/barrage.names"
# sed rather than grep, which fails on an order with no name in it.
if $append; then sed '/^#/d' "$output" >"$work/previous.names"; else : >"$work/previous.names"; fi
{
    echo "# The functions hauld runs, in the order the lean build links them: start-up first, then a typical use,"
    echo "# then what a hostile barrage adds."
    echo "# Made by scripts/link/hauld-order.sh; see there."
    # Each name once, in the order first seen.
    cat "$work/previous.names" "$work/start.names" "$work/use.names" "$work/barrage.names" | awk '!seen[$0]++'
} >"$work/order"
mv "$work/order" "$output"
echo "hauld-order.sh: $(grep -vc '^#' "$output") functions ($(wc -l <"$work/start.names") at start-up) in $output"
