# Haul: `make run` sets up, builds and runs the daemon; `make test` sets up, builds and runs every test;
# `make bench` measures a release hauld beside curl; `make deb` builds the Debian package.
SWIFT ?= swift

.PHONY: all deps test-deps bench-deps deb-deps build build-tests run test test-deb bench bench-build deb clean

all: build

deps:
	@scripts/install-deps.sh run

test-deps:
	@scripts/install-deps.sh test

bench-deps:
	@scripts/install-deps.sh bench

deb-deps:
	@scripts/install-deps.sh deb

build: deps
	$(SWIFT) build

build-tests: test-deps
	$(SWIFT) build --build-tests

# Foreground hauld on the session bus (a private one is started when there is none). Ctrl-C stops it.
run: build
	@scripts/run-daemon.sh "$$($(SWIFT) build --show-bin-path)/hauld"

# Every test runs on private buses it starts itself; dbus-run-session makes sure that nothing can reach
# the user's own session bus either. Then the Debian package's test, which is no Swift test: it needs the
# package, a separate release build with the Swift runtime linked in.
test: build-tests
	dbus-run-session -- $(SWIFT) test --skip-build
	$(MAKE) test-deb

# hauld beside curl on a loopback nginx and a private bus (Benchmarks/RESULTS.md): the lean release build below,
# then a table on stdout and the figures in $(BENCH_OUTPUT). BENCH_FLAGS passes options (`haul-bench --help`).
BENCH_OUTPUT ?= .build/bench/results.json
BENCH_FLAGS ?=

bench: bench-deps bench-build
	"$$($(SWIFT) build -c release $(LEAN_SWIFT_FLAGS) --show-bin-path)/haul-bench" --output "$(BENCH_OUTPUT)" \
		$(BENCH_FLAGS)

# The release build make bench measures: an idle hauld of 15 MB RSS, 20 MB after a load, where a plain
# `swift build -c release` gives 24 and 31 MB (Benchmarks/RESULTS.md, 2026-11-24). In a folder of its own: its flags
# differ from a plain build's, and changing them rebuilds every module.
# - The Swift runtime and FoundationEssentials linked in: their symbol tables and relocations, read at start-up, were
#   2.7 MB of it. Only Swift concurrency's hooks are exported (scripts/link/exports.map, lld-with-concurrency-hooks).
# - Every function in a section of its own, public ones included (-internalize-at-link): the linker drops what
#   nothing calls, and the runtime records of types it dropped (-conditional-runtime-records).
# - Linked by lld in the order of scripts/link/hauld.order, which scripts/link/hauld-order.sh makes: the functions a
#   typical run calls, together.
# - Relative relocations packed (DT_RELR) when this machine's glibc reads them (2.36, Debian 12); the programs then
#   need glibc 2.36 or later.
LEAN_SCRATCH = .build-lean
GLIBC_READS_RELR := $(shell getconf GNU_LIBC_VERSION 2>/dev/null | \
	awk '{ split($$2, v, "."); if (v[1] > 2 || (v[1] == 2 && v[2] >= 36)) print "yes" }')
LEAN_SWIFT_FLAGS = --scratch-path $(LEAN_SCRATCH) --static-swift-stdlib \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xswiftc -Xfrontend -Xswiftc -internalize-at-link \
	-Xswiftc -Xfrontend -Xswiftc -conditional-runtime-records -Xcc -ffunction-sections -Xcc -fdata-sections \
	-Xswiftc -ld-path=$(CURDIR)/scripts/link/lld-with-concurrency-hooks \
	-Xlinker --version-script=$(CURDIR)/scripts/link/exports.map \
	-Xlinker --symbol-ordering-file=$(CURDIR)/scripts/link/hauld.order -Xlinker --no-warn-symbol-ordering \
	$(if $(GLIBC_READS_RELR),-Xlinker -z -Xlinker pack-relative-relocs)

bench-build:
	@# SwiftPM does not know the order file as an input: a newer one must relink hauld.
	@bin="$$($(SWIFT) build -c release $(LEAN_SWIFT_FLAGS) --show-bin-path)"; \
		if [ scripts/link/hauld.order -nt "$$bin/hauld" ]; then rm -f "$$bin/hauld"; fi
	$(SWIFT) build -c release $(LEAN_SWIFT_FLAGS)

clean:
	$(SWIFT) package clean

# The Debian package haul_<version>_<arch>.deb, here: a release build in its own scratch path with the Swift runtime
# linked in, so the package depends on Debian's libraries only. The version is the top entry of scripts/deb/changelog.
# The toolset's linker keeps hauld's concurrency executor hook exported (scripts/deb/link-with-concurrency-hooks);
# no $ORIGIN run path (no library sits beside /usr/bin/hauld); -z now completes the RELRO hardening.
DEB_SWIFT_FLAGS = --scratch-path .build-deb --static-swift-stdlib --toolset $(CURDIR)/scripts/deb/toolset.json \
	--disable-local-rpath -Xlinker -z -Xlinker now
# The man pages come from swift-argument-parser's generate-manual, built from the checkout the package build resolved:
# its plugin would rebuild every product without --static-swift-stdlib, which `swift package` does not take.
MANUAL_SWIFT_FLAGS = --package-path .build-deb/checkouts/swift-argument-parser --scratch-path .build-deb/generate-manual
DEB_FILE = haul_$$(dpkg-parsechangelog -l scripts/deb/changelog -S Version)_$$(dpkg --print-architecture).deb

deb: deb-deps
	$(SWIFT) build -c release $(DEB_SWIFT_FLAGS)
	$(SWIFT) build $(MANUAL_SWIFT_FLAGS) --product generate-manual
	@MANPAGE_TOOL="$$($(SWIFT) build $(MANUAL_SWIFT_FLAGS) --show-bin-path)/generate-manual" scripts/build-deb.sh \
		"$$($(SWIFT) build -c release $(DEB_SWIFT_FLAGS) --show-bin-path)" .

# Unpacks the package into a temporary root and runs a download with its hauld and haul on a private bus.
test-deb: deb
	scripts/test-deb.sh "$(DEB_FILE)"

# Install / uninstall: a release build, then scripts/install-haul.sh puts hauld, haul, the systemd user unit,
# the D-Bus activation file, the interface XML, shell completions and man pages below $(PREFIX), staged under
# $(DESTDIR) for packagers. `make install PREFIX=$HOME/.local` needs no root. INSTALL_SWIFT_FLAGS passes extra
# options to swift build and swift package (e.g. --scratch-path DIR).
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
