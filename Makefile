# Haul: `make run` sets up, builds and runs the daemon; `make test` sets up, builds and runs every test;
# `make bench` measures a release hauld beside curl; `make deb` builds the Debian package.
SWIFT ?= swift

.PHONY: all deps test-deps bench-deps deb-deps lean-deps build build-tests run test test-deb bench lean-build deb clean

all: build

deps:
	@scripts/install-deps.sh run

test-deps:
	@scripts/install-deps.sh test

bench-deps:
	@scripts/install-deps.sh bench

deb-deps:
	@scripts/install-deps.sh deb

lean-deps:
	@scripts/install-deps.sh lean

build: deps
	$(SWIFT) build

build-tests: test-deps
	$(SWIFT) build --build-tests

# Foreground hauld on the session bus (a private one is started when there is none). Ctrl-C stops it.
run: build
	@scripts/run-daemon.sh "$$($(SWIFT) build --show-bin-path)/hauld"

# Every test runs on private buses it starts itself; dbus-run-session makes sure that nothing can reach
# the user's own session bus either. The tests against real desktops and browsers (HostTests) come after the others,
# one at a time: each starts a whole desktop or browser. Then the Debian package's test, which is no Swift test: it
# needs the package, made from the lean release build below. The in-process suites (the pure machines', the outbox's
# and the desktop bridge's) run in a process of their own first: the random-sequence and cost suites are CPU-bound
# and, beside the bus tests, would hold every cooperative thread (two on a 2-core machine) that the bus tests' timers
# and replies need. The bus tests run BUS_TESTS_AT_ONCE at a time (swift-testing's
# SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH): all at once, dozens of test servers, buses and haulds started
# together on two cores, and a loaded machine's first fixtures took over a minute to come up, past the timeouts of
# the simplest round trips; six at a time the suite passes in about the same time.
# Each of the three runs takes 0.5–4 minutes here; one still running after TEST_MINUTES has hung, and scripts/watchdog
# prints its threads' stacks and ends it, rather than let it hold CI until CI's own limit.
IN_PROCESS_SUITES = HaulCoreTests|ServiceKitTests|HaulDesktopTests
BUS_TESTS_AT_ONCE = 6
TEST_MINUTES = 20

test: build-tests
	scripts/watchdog $(TEST_MINUTES) \
		dbus-run-session -- $(SWIFT) test --skip-build --filter '^($(IN_PROCESS_SUITES))\.'
	SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(BUS_TESTS_AT_ONCE) scripts/watchdog $(TEST_MINUTES) \
		dbus-run-session -- $(SWIFT) test --skip-build --skip '^($(IN_PROCESS_SUITES)|HostTests)\.'
	scripts/watchdog $(TEST_MINUTES) \
		dbus-run-session -- $(SWIFT) test --skip-build --filter '^HostTests\.' --no-parallel
	$(MAKE) test-deb

# hauld beside curl on a loopback nginx and a private bus (Benchmarks/RESULTS.md): the lean release build below,
# the one the Debian package holds, then a table on stdout and the figures in $(BENCH_OUTPUT). BENCH_FLAGS passes
# options (`haul-bench --help`).
BENCH_OUTPUT ?= .build/bench/results.json
BENCH_FLAGS ?=

bench: bench-deps lean-build
	"$(LEAN_BIN_DIR)/haul-bench" --output "$(BENCH_OUTPUT)" $(BENCH_FLAGS)

clean:
	$(SWIFT) package clean
	rm -rf $(LEAN_SCRATCH)

# The lean release build: what `make deb` packages and `make bench` measures. An idle hauld of 15 MB RSS, 20 MB
# after a load, where a plain `swift build -c release` gives 24 and 31 MB (Benchmarks/RESULTS.md). In a scratch path
# of its own: its flags differ from a plain build's, and changing them rebuilds every module.
# - The Swift runtime and FoundationEssentials linked in: the package then depends on Debian's libraries only, and
#   their symbol tables and relocations, read at start-up, were 2.7 MB of the RSS. Only Swift concurrency's hooks are
#   exported (scripts/link/exports.map); scripts/link/link-with-concurrency-hooks says why it is needed for that.
# - Every function in a section of its own, public ones included (-internalize-at-link): the linker drops what
#   nothing calls, and the runtime records of types it dropped (-conditional-runtime-records).
# - Linked by lld in the order of scripts/link/hauld.order, which scripts/link/hauld-order.sh makes: the functions a
#   typical run calls, together, then those a hostile barrage adds; those without a symbol, which no order can name,
#   in one place of their own (scripts/link/private-functions.ld).
# - Relative relocations packed (DT_RELR) when this machine's glibc reads them (2.36, Debian 12); the programs then
#   need glibc 2.36 or later, and scripts/build-deb.sh makes the package say so.
# - No $ORIGIN run path (no library sits beside /usr/bin/hauld); -z now completes the RELRO hardening.
LEAN_SCRATCH = .build-lean
GLIBC_READS_RELR := $(shell getconf GNU_LIBC_VERSION 2>/dev/null | \
	awk '{ split($$2, v, "."); if (v[1] > 2 || (v[1] == 2 && v[2] >= 36)) print "yes" }')
LEAN_SWIFT_FLAGS = -c release --scratch-path $(LEAN_SCRATCH) --static-swift-stdlib --disable-local-rpath \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xswiftc -Xfrontend -Xswiftc -internalize-at-link \
	-Xswiftc -Xfrontend -Xswiftc -conditional-runtime-records -Xcc -ffunction-sections -Xcc -fdata-sections \
	-Xswiftc -ld-path=$(CURDIR)/scripts/link/link-with-concurrency-hooks \
	-Xlinker --version-script=$(CURDIR)/scripts/link/exports.map \
	-Xlinker --symbol-ordering-file=$(CURDIR)/scripts/link/hauld.order -Xlinker --no-warn-symbol-ordering \
	-Xlinker -T -Xlinker $(CURDIR)/scripts/link/private-functions.ld \
	-Xlinker -z -Xlinker now $(if $(GLIBC_READS_RELR),-Xlinker -z -Xlinker pack-relative-relocs)
LEAN_BIN_DIR = $$($(SWIFT) build $(LEAN_SWIFT_FLAGS) --show-bin-path)

lean-build: lean-deps
	@# SwiftPM does not know the files in scripts/link as inputs of the link: a newer one must relink the programs.
	@bin="$(LEAN_BIN_DIR)"; for program in hauld haul haul-browser-host; do \
		if [ -n "$$(find scripts/link -newer "$$bin/$$program" 2>/dev/null)" ]; then rm -f "$$bin/$$program"; fi; \
	done
	$(SWIFT) build $(LEAN_SWIFT_FLAGS)

# The Debian package haul_<version>_<arch>.deb, here, from the lean build: the Swift runtime linked in, so the
# package depends on Debian's libraries only. The version is the top entry of scripts/deb/changelog.
# The man pages come from swift-argument-parser's generate-manual, built from the checkout the package build resolved:
# its plugin would rebuild every product without --static-swift-stdlib, which `swift package` does not take.
MANUAL_SWIFT_FLAGS = --package-path $(LEAN_SCRATCH)/checkouts/swift-argument-parser \
	--scratch-path $(LEAN_SCRATCH)/generate-manual
DEB_FILE = haul_$$(dpkg-parsechangelog -l scripts/deb/changelog -S Version)_$$(dpkg --print-architecture).deb

deb: deb-deps lean-build
	$(SWIFT) build $(MANUAL_SWIFT_FLAGS) --product generate-manual
	@MANPAGE_TOOL="$$($(SWIFT) build $(MANUAL_SWIFT_FLAGS) --show-bin-path)/generate-manual" scripts/build-deb.sh \
		"$(LEAN_BIN_DIR)" .

# Unpacks the package into a temporary root and runs a download with its hauld and haul on a private bus.
test-deb: deb
	scripts/test-deb.sh "$(DEB_FILE)"

# Install / uninstall: a release build, then scripts/install-haul.sh puts hauld, haul, the systemd user unit,
# the D-Bus activation file, the interface XML, shell completions, man pages, the browsers' native-messaging host
# and the browser extension below $(PREFIX), and the host's manifests where each browser looks for them (see the
# script), staged under $(DESTDIR) for packagers. `make install PREFIX=$HOME/.local` needs no root.
# INSTALL_SWIFT_FLAGS passes extra options to swift build and swift package (e.g. --scratch-path DIR).
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_SWIFT_FLAGS ?=

.PHONY: install uninstall

install: deps
	$(SWIFT) build -c release $(INSTALL_SWIFT_FLAGS)
	@PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" SWIFT="$(SWIFT)" SWIFT_FLAGS="$(INSTALL_SWIFT_FLAGS)" \
		scripts/install-haul.sh install "$$($(SWIFT) build -c release $(INSTALL_SWIFT_FLAGS) --show-bin-path)"

uninstall:
	@PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install-haul.sh uninstall
