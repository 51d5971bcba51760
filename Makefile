# Haul: `make run` sets up, builds and runs the daemon; `make test` sets up, builds and runs every test;
# `make bench` measures a release hauld beside curl.
SWIFT ?= swift

.PHONY: all deps test-deps bench-deps build build-tests run test bench clean

all: build

deps:
	@scripts/install-deps.sh run

test-deps:
	@scripts/install-deps.sh test

bench-deps:
	@scripts/install-deps.sh bench

build: deps
	$(SWIFT) build

build-tests: test-deps
	$(SWIFT) build --build-tests

# Foreground hauld on the session bus (a private one is started when there is none). Ctrl-C stops it.
run: build
	@scripts/run-daemon.sh "$$($(SWIFT) build --show-bin-path)/hauld"

# Every test runs on private buses it starts itself; dbus-run-session makes sure that nothing can reach
# the user's own session bus either.
test: build-tests
	dbus-run-session -- $(SWIFT) test --skip-build

# hauld beside curl on a loopback nginx and a private bus (Benchmarks/RESULTS.md): a release build, then a table
# on stdout and the figures in $(BENCH_OUTPUT). BENCH_FLAGS passes options (`haul-bench --help`).
BENCH_OUTPUT ?= .build/bench/results.json
BENCH_FLAGS ?=

bench: bench-deps
	$(SWIFT) build -c release
	"$$($(SWIFT) build -c release --show-bin-path)/haul-bench" --output "$(BENCH_OUTPUT)" $(BENCH_FLAGS)

clean:
	$(SWIFT) package clean

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
