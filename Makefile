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
