# transferd — build, run, test, benchmark, install.
#   make run      build (release) and run the daemon in the foreground
#   make test     run the whole test suite
#   make bench    compare transferd with curl and aria2 on a local nginx
#   make install  install binaries, units and the default configuration (PREFIX, DESTDIR)

PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
RELEASE_BIN = .build/release

.PHONY: deps build run test bench install clean

# libsystemd-dev provides sd_notify and friends; pkg-config finds it.
deps:
	@if ! pkg-config --exists libsystemd 2>/dev/null; then \
		echo "installing libsystemd-dev and pkg-config (apt-get)"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libsystemd-dev pkg-config; \
	fi

build: deps
	$(SWIFT) build -c release --product transferd
	$(SWIFT) build -c release --product transferctl

run: build
	$(RELEASE_BIN)/transferd $(ARGS)

test: deps
	$(SWIFT) test

bench: deps
	Tests/Benchmarks/bench.sh

install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)/etc/transferd $(DESTDIR)/lib/systemd/system $(DESTDIR)$(PREFIX)/share/doc/transferd
	install -m 0755 $(RELEASE_BIN)/transferd $(RELEASE_BIN)/transferctl $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 README.md docs/protocol.md $(DESTDIR)$(PREFIX)/share/doc/transferd/
	install -m 0644 config/README.md $(DESTDIR)$(PREFIX)/share/doc/transferd/configuration.md
	install -m 0644 systemd/transferd.service $(DESTDIR)/lib/systemd/system/
	sed -i 's|/usr/local/|$(PREFIX)/|g' $(DESTDIR)/lib/systemd/system/transferd.service
	[ -e $(DESTDIR)/etc/transferd/transferd.json ] || install -m 0644 config/transferd.json $(DESTDIR)/etc/transferd/

clean:
	rm -rf .build
