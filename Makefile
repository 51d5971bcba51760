# Haul: `make run` sets up, builds and runs the daemon; `make test` sets up, builds and runs every test.
SWIFT ?= swift

.PHONY: all deps test-deps build build-tests run test clean

all: build

deps:
	@scripts/install-deps.sh run

test-deps:
	@scripts/install-deps.sh test

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
