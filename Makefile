# transferd — build, run, test, benchmark, install.
#   make run      build (release) and run the daemon in the foreground
#   make check-static  show that the release binaries need no Swift runtime (ldd) and their sizes
#   make test     check the man pages (check-man), then run the whole test suite
#   make check-man     format the man pages with every groff warning on (groff -ww): any warning fails
#   make fuzz     build the libFuzzer targets and run each for FUZZ_SECONDS (60); fails on a crash
#   make faults   fail each write, sync, rename, open and truncate of a workload in turn; restart and check nothing was lost
#   make bench    compare transferd with curl and aria2 on a local nginx, then the job table's benchmarks
#   make systemd-test  install into a booted Debian 12 container and check it under systemd (root)
#   make install  install what make build made: binaries, man pages (man/), completions, system and user units, the default configuration (PREFIX, DESTDIR); never builds
#   make uninstall     remove what install put in place (configuration, journal and downloads stay)
#   make install-user  install binaries and user units in your home directory (no root); make uninstall-user
#   make deb      build transferd_VERSION_ARCH.deb (dpkg-deb) from the release build; make deb-check runs lintian on it

PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
RELEASE_BIN = .build/release

FUZZ_SECONDS ?= 60

.PHONY: deps build check-static generated generate-docs man check-man installable run test fuzz faults bench systemd-test install uninstall install-user uninstall-user deb deb-check clean

# libsystemd-dev provides sd_notify and friends; pkg-config finds it. libcurl4-openssl-dev: the
# static FoundationNetworking links libcurl, which stays a shared library (libcurl4 on the target).
# nginx-light and openssl: some integration tests download from a real nginx (TLS with a CA the test
# makes, auth_basic) besides the in-repo test server, some through tinyproxy; socat speaks the protocol
# as another user does. curl: tests compare with /usr/bin/curl; systemd: systemd-analyze, which the
# unit-file tests run (without it they would not check the units); jq: docs/protocol.md's shell
# example, which a test runs as written; groff-base: groff, with which check-man formats the man pages.
DEB_DEPS = libsystemd-dev libcurl4-openssl-dev pkg-config nginx-light openssl socat tinyproxy curl systemd jq groff-base
deps:
	@if ! pkg-config --exists libsystemd libcurl 2>/dev/null || [ ! -x /usr/sbin/nginx ] || [ ! -x /usr/bin/openssl ] || [ ! -x /usr/bin/socat ] \
		|| [ ! -x /usr/bin/tinyproxy ] || [ ! -x /usr/bin/curl ] || ! command -v systemd-analyze >/dev/null || [ ! -x /usr/bin/jq ] || [ ! -x /usr/bin/groff ]; then \
		echo "installing $(DEB_DEPS) (apt-get)"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $(DEB_DEPS); \
	fi
	@# Real servers from PyPI that tests talk to: a tus server (Tests/Peers/tus_server.py) and S3 (moto).
	@# A Python that refuses pip installs (PEP 668) gets a warning: only those tests then fail, saying what is missing.
	@python3 -c 'import tuspyserver, uvicorn, moto.server, boto3' 2>/dev/null || { echo "installing tuspyserver, uvicorn, moto and boto3 (pip)"; \
		python3 -m pip install -q tuspyserver==4.4.3 uvicorn==0.54.0 'moto[server]==5.2.1' boto3 \
		|| echo "warning: pip could not install them; the tus and S3 tests will fail until they are installed (a virtual environment on the PATH will do)"; }

# Release binaries with the Swift runtime, Foundation and Dispatch linked in, so that they run where
# no Swift toolchain is installed: they need only glibc, libstdc++, libcurl4 and libsystemd0, which
# every Debian 12 / Ubuntu 22.04 system has. `make check-static` proves it with ldd.
STATIC = --static-swift-stdlib
# Installed binaries are stripped of their debugging symbols (120 -> 69 MiB for transferd); keep
# them with make install INSTALL_STRIP=.
INSTALL_STRIP ?= -s

build: deps
	$(SWIFT) build -c release $(STATIC) --product transferd
	$(SWIFT) build -c release $(STATIC) --product transferctl
	@# SwiftPM does not link again when only --static-swift-stdlib changed (after a plain
	@# swift build -c release, or a plugin's release build): remove the binaries so that it does.
	@if ldd $(RELEASE_BIN)/transferd $(RELEASE_BIN)/transferctl | grep -q 'libswiftCore'; then \
		echo "linking again with the Swift runtime inside"; \
		rm -f $(RELEASE_BIN)/transferd $(RELEASE_BIN)/transferctl; \
		$(SWIFT) build -c release $(STATIC) --product transferd && $(SWIFT) build -c release $(STATIC) --product transferctl; \
	fi
	@# The man pages and completions, so that install (which never builds) finds everything.
	$(MAKE) --no-print-directory generate-docs

check-static: build
	@for binary in $(RELEASE_BIN)/transferd $(RELEASE_BIN)/transferctl; do \
		if ldd $$binary | grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime|lib_Foundation'; then \
			echo "$$binary needs the Swift runtime above"; exit 1; \
		fi; \
		echo "$$binary: $$(du -h $$binary | cut -f1), needs only: $$(ldd $$binary | awk '{print $$1}' | grep -v -e linux-vdso -e ld-linux | tr '\n' ' ')"; \
	done

run: build
	$(RELEASE_BIN)/transferd $(ARGS)

# At most this many tests run at once. Many integration tests each run a daemon, a test server and
# a client; more at once than this on a 2-core machine only makes each wait for the others longer.
TEST_WIDTH ?= 6

test: deps check-man
	SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(TEST_WIDTH) $(SWIFT) test

# Tests/Fuzz/README.md: the targets, their seeds, and what to do with a crash.
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) SWIFT=$(SWIFT) Tests/Fuzz/fuzz.sh

# Tests/Faults/README.md: the Nth file-system call of a workload fails, for every N; the daemon must
# start again with every acknowledged job and no wrong file. FAULTS_ARGS='--bounded 80' samples (CI).
FAULTS_ARGS ?=
faults: deps
	$(SWIFT) build --product transferd
	$(SWIFT) build --product transferctl
	python3 Tests/Faults/sweep.py --bin .build/debug $(FAULTS_ARGS)

bench: deps
	Tests/Benchmarks/bench.sh
	BENCH_SKIP_BUILD=$${BENCH_SKIP_BUILD:-0} Tests/Benchmarks/jobtable.sh

# Tests/Systemd/README.md: installs into a booted Debian 12 container (systemd-nspawn) and checks
# socket activation, a reboot, reload, the watchdog, stop and start, and who may submit.
systemd-test: deps
	Tests/Systemd/systemd-test.sh

# Man pages: transferctl(1) and transferd(8) are written by hand (man/); transferd.json(5) is made
# from config/README.md by man/config-to-roff.py, so the page and the Markdown never differ.
# Completions for bash, zsh and fish come from the release binaries' argument parsers
# (--generate-completion-script), so they match --help.
GENERATED = .build/generated
MANUAL_DATE = $(shell git log -1 --format=%cs 2>/dev/null || date +%F)
VERSION = $(shell sed -n 's/^public let transferdVersion = "\(.*\)"/\1/p' Sources/TransferProtocol/RPCMethod.swift)
MAN_PAGES = man/transferctl.1 man/transferd.8 $(GENERATED)/man/transferd.json.5
MANDIR ?= $(PREFIX)/share/man
BASHCOMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPLETIONDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPLETIONDIR ?= $(PREFIX)/share/fish/vendor_completions.d

# build makes them too.
generated: build

$(GENERATED)/man/transferd.json.5: config/README.md man/config-to-roff.py
	install -d $(@D)
	python3 man/config-to-roff.py config/README.md --date $(MANUAL_DATE) --version $(VERSION) >$@.tmp
	mv $@.tmp $@

# The configuration file's man page (python3 only: nothing is compiled).
man: $(GENERATED)/man/transferd.json.5

# Every page formatted as man(1) would, with all of groff's warnings on: a warning, a character
# that is not ASCII, or a page whose .TH does not name this version fails. make test runs it first.
check-man: man
	@command -v groff >/dev/null || { echo "check-man needs groff (Debian: apt-get install groff-base; make deps installs it)" >&2; exit 1; }
	@for page in $(MAN_PAGES); do \
		warnings=$$(groff -ww -z -man -Tutf8 $$page 2>&1); \
		if [ -n "$$warnings" ]; then echo "$$page: groff warns:" >&2; echo "$$warnings" >&2; exit 1; fi; \
		if LC_ALL=C grep -n '[^[:print:][:space:]]' $$page >&2; then echo "$$page: write other characters as roff escapes" >&2; exit 1; fi; \
		grep -q '^\.TH .* "transferd $(VERSION)"' $$page || { echo "$$page: its .TH line does not say transferd $(VERSION)" >&2; exit 1; }; \
	done
	@echo "man pages format without warnings: $(MAN_PAGES)"

# The completions of the release binaries built already, and the configuration page (build runs it).
generate-docs: man
	rm -rf $(GENERATED)/completions
	install -d $(GENERATED)/completions
	for tool in transferctl transferd; do \
		$(RELEASE_BIN)/$$tool --generate-completion-script bash >$(GENERATED)/completions/$$tool.bash && \
		$(RELEASE_BIN)/$$tool --generate-completion-script zsh >$(GENERATED)/completions/_$$tool && \
		$(RELEASE_BIN)/$$tool --generate-completion-script fish >$(GENERATED)/completions/$$tool.fish || exit 1; \
	done

# Where systemd looks for units and its sysusers.d and tmpfiles.d files, as systemd's pkg-config file
# gives them for PREFIX: /usr/local/lib/systemd/system for the default PREFIX=/usr/local (systemd reads
# it; the vendor directory /lib/systemd/system is left to packages), /usr/lib/systemd/system for
# PREFIX=/usr. Without systemd.pc, the same paths below PREFIX. Each is a variable:
# make install UNITDIR=/etc/systemd/system.
SYSTEMD_PC = pkg-config --define-variable=prefix=$(PREFIX) --define-variable=root_prefix=$(PREFIX) \
	--define-variable=rootprefix=$(PREFIX)
systemd_dir = $(or $(shell $(SYSTEMD_PC) --variable=$(1) systemd 2>/dev/null),$(PREFIX)/$(2))
UNITDIR ?= $(call systemd_dir,systemdsystemunitdir,lib/systemd/system)
USERUNITDIR ?= $(call systemd_dir,systemduserunitdir,lib/systemd/user)
SYSUSERSDIR ?= $(call systemd_dir,sysusersdir,lib/sysusers.d)
TMPFILESDIR ?= $(call systemd_dir,tmpfilesdir,lib/tmpfiles.d)
DOCDIR = $(PREFIX)/share/doc/transferd
# systemctl on the running system (not for a DESTDIR staging tree, and not where systemd is not PID 1).
SYSTEMD_RUNNING = $(shell [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ] && echo yes)

# install never builds: under sudo, swift is usually not on the PATH (secure_path), and a build as
# root would leave root-owned files in .build. Build first as yourself: make build (it generates the
# man pages and completions too), then sudo make install.
INSTALLED_FILES = $(RELEASE_BIN)/transferd $(RELEASE_BIN)/transferctl $(GENERATED)/man/transferd.json.5 \
	$(GENERATED)/completions/transferctl.bash $(GENERATED)/completions/transferd.bash
installable:
	@for file in $(INSTALLED_FILES); do \
		if [ ! -e "$$file" ]; then \
			echo "$$file is missing: run 'make build' first (as yourself, without sudo), then 'sudo make install'" >&2; exit 1; \
		fi; \
	done

install: installable
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)/etc/transferd $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(USERUNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPLETIONDIR) $(DESTDIR)$(ZSHCOMPLETIONDIR) \
		$(DESTDIR)$(FISHCOMPLETIONDIR)
	install -m 0755 $(INSTALL_STRIP) $(RELEASE_BIN)/transferd $(RELEASE_BIN)/transferctl $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 README.md docs/protocol.md docs/metrics.md $(DESTDIR)$(DOCDIR)/
	install -m 0644 config/README.md $(DESTDIR)$(DOCDIR)/configuration.md
	install -m 0644 man/transferctl.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(GENERATED)/man/transferd.json.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 man/transferd.8 $(DESTDIR)$(MANDIR)/man8/
	@# The pages name the installed paths of the default PREFIX.
	sed -i 's|/usr/local/|$(PREFIX)/|g' $(DESTDIR)$(MANDIR)/man1/transferctl.1 $(DESTDIR)$(MANDIR)/man5/transferd.json.5 \
		$(DESTDIR)$(MANDIR)/man8/transferd.8
	for tool in transferctl transferd; do \
		install -m 0644 $(GENERATED)/completions/$$tool.bash $(DESTDIR)$(BASHCOMPLETIONDIR)/$$tool && \
		install -m 0644 $(GENERATED)/completions/_$$tool $(DESTDIR)$(ZSHCOMPLETIONDIR)/ && \
		install -m 0644 $(GENERATED)/completions/$$tool.fish $(DESTDIR)$(FISHCOMPLETIONDIR)/ || exit 1; \
	done
	install -m 0644 systemd/transferd.service systemd/transferd.socket $(DESTDIR)$(UNITDIR)/
	install -m 0644 systemd/user/transferd.service systemd/user/transferd.socket $(DESTDIR)$(USERUNITDIR)/
	sed -i 's|/usr/local/|$(PREFIX)/|g' $(DESTDIR)$(UNITDIR)/transferd.service $(DESTDIR)$(UNITDIR)/transferd.socket \
		$(DESTDIR)$(USERUNITDIR)/transferd.service $(DESTDIR)$(USERUNITDIR)/transferd.socket
	install -m 0644 systemd/transferd.sysusers $(DESTDIR)$(SYSUSERSDIR)/transferd.conf
	install -m 0644 systemd/transferd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/transferd.conf
	[ -e $(DESTDIR)/etc/transferd/transferd.json ] || install -m 0644 config/transferd.json $(DESTDIR)/etc/transferd/
	@# On the running system (no DESTDIR): create the user and group and the download directory now,
	@# as a package's post-install would, so the socket unit's group exists when it starts.
	@if [ -z "$(DESTDIR)" ] && command -v systemd-sysusers >/dev/null; then \
		systemd-sysusers $(SYSUSERSDIR)/transferd.conf && systemd-tmpfiles --create $(TMPFILESDIR)/transferd.conf; \
	fi
	@# Enabled, the service starts at boot and continues interrupted downloads without waiting for a
	@# client; an upgrade restarts a running daemon on the new binary (its downloads resume).
	@if [ -n "$(SYSTEMD_RUNNING)" ]; then \
		systemctl daemon-reload && systemctl try-restart transferd.service && \
		systemctl enable --now transferd.socket transferd.service; \
	else \
		echo "then, on the target system: systemctl daemon-reload; systemctl enable --now transferd.socket transferd.service"; \
	fi

# The Debian package (packaging/deb): what install puts in place for PREFIX=/usr, with maintainer
# scripts that create the user and group, apply the tmpfiles.d file, and enable and start the units
# as dh_installsystemd would; Depends: from dpkg-shlibdeps (package dpkg-dev, installed if missing).
# Written to DEB_OUTDIR (this directory). deb-check runs lintian (installed if missing) on it and
# fails on any error it reports.
DEB_OUTDIR ?= $(CURDIR)
deb: build
	@command -v dpkg-shlibdeps >/dev/null || { echo "installing dpkg-dev (apt-get)"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq dpkg-dev; }
	DEB_OUTDIR=$(DEB_OUTDIR) packaging/deb/build-deb.sh

deb-check: deb
	@command -v lintian >/dev/null || { echo "installing lintian (apt-get)"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq lintian; }
	lintian --fail-on error --display-level '>=info' --tag-display-limit 0 "$$(cat .build/deb/deb-file)"

# Removes what install put in place. The configuration in /etc/transferd, the journal in
# /var/lib/transferd, the downloads in /srv/transferd and the transferd user stay, as a package's
# remove (not purge) leaves them.
uninstall:
	@if [ -n "$(SYSTEMD_RUNNING)" ]; then \
		systemctl disable --now transferd.service transferd.socket 2>/dev/null || true; \
	fi
	rm -f $(DESTDIR)$(PREFIX)/bin/transferd $(DESTDIR)$(PREFIX)/bin/transferctl
	rm -f $(DESTDIR)$(UNITDIR)/transferd.service $(DESTDIR)$(UNITDIR)/transferd.socket
	rm -f $(DESTDIR)$(USERUNITDIR)/transferd.service $(DESTDIR)$(USERUNITDIR)/transferd.socket
	rm -f $(DESTDIR)$(SYSUSERSDIR)/transferd.conf $(DESTDIR)$(TMPFILESDIR)/transferd.conf
	rm -rf $(DESTDIR)$(DOCDIR)
	rm -f $(DESTDIR)$(MANDIR)/man1/transferctl.1 $(DESTDIR)$(MANDIR)/man5/transferd.json.5 $(DESTDIR)$(MANDIR)/man8/transferd.8
	for tool in transferctl transferd; do \
		rm -f $(DESTDIR)$(BASHCOMPLETIONDIR)/$$tool $(DESTDIR)$(ZSHCOMPLETIONDIR)/_$$tool $(DESTDIR)$(FISHCOMPLETIONDIR)/$$tool.fish; \
	done
	@if [ -n "$(SYSTEMD_RUNNING)" ]; then systemctl daemon-reload; fi
	@echo "kept: /etc/transferd, /var/lib/transferd, /srv/transferd and the transferd user (remove them by hand to purge)"

# A user's own daemon, without root: binaries in ~/.local/bin, user units in ~/.config/systemd/user,
# enabled so that they start with the user manager (at boot too after `loginctl enable-linger`).
USERPREFIX ?= $(HOME)/.local
USERCONFIGUNITDIR ?= $(HOME)/.config/systemd/user
USER_MANAGER = $(shell systemctl --user show-environment >/dev/null 2>&1 && echo yes)

install-user: build
	install -d $(USERPREFIX)/bin $(USERPREFIX)/share/doc/transferd $(USERCONFIGUNITDIR) $(USERPREFIX)/share/man/man1 \
		$(USERPREFIX)/share/man/man5 $(USERPREFIX)/share/man/man8 $(USERPREFIX)/share/bash-completion/completions $(USERPREFIX)/share/fish/vendor_completions.d
	install -m 0644 man/transferctl.1 $(USERPREFIX)/share/man/man1/
	install -m 0644 $(GENERATED)/man/transferd.json.5 $(USERPREFIX)/share/man/man5/
	install -m 0644 man/transferd.8 $(USERPREFIX)/share/man/man8/
	sed -i 's|/usr/local/|$(USERPREFIX)/|g' $(USERPREFIX)/share/man/man1/transferctl.1 $(USERPREFIX)/share/man/man5/transferd.json.5 \
		$(USERPREFIX)/share/man/man8/transferd.8
	install -m 0644 $(GENERATED)/completions/transferctl.bash $(USERPREFIX)/share/bash-completion/completions/transferctl
	install -m 0644 $(GENERATED)/completions/transferctl.fish $(USERPREFIX)/share/fish/vendor_completions.d/
	install -m 0755 $(INSTALL_STRIP) $(RELEASE_BIN)/transferd $(RELEASE_BIN)/transferctl $(USERPREFIX)/bin/
	install -m 0644 README.md docs/protocol.md docs/metrics.md $(USERPREFIX)/share/doc/transferd/
	install -m 0644 config/README.md $(USERPREFIX)/share/doc/transferd/configuration.md
	install -m 0644 systemd/user/transferd.service systemd/user/transferd.socket $(USERCONFIGUNITDIR)/
	sed -i 's|/usr/local/|$(USERPREFIX)/|g' $(USERCONFIGUNITDIR)/transferd.service $(USERCONFIGUNITDIR)/transferd.socket
	@if [ -n "$(USER_MANAGER)" ]; then \
		systemctl --user daemon-reload && systemctl --user try-restart transferd.service && \
		systemctl --user enable --now transferd.socket transferd.service; \
		echo "to run it without a login session too (at boot): loginctl enable-linger $$USER"; \
	else \
		echo "no user manager reachable; in your session: systemctl --user enable --now transferd.socket transferd.service"; \
	fi

uninstall-user:
	@if [ -n "$(USER_MANAGER)" ]; then systemctl --user disable --now transferd.service transferd.socket 2>/dev/null || true; fi
	rm -f $(USERPREFIX)/bin/transferd $(USERPREFIX)/bin/transferctl
	rm -f $(USERCONFIGUNITDIR)/transferd.service $(USERCONFIGUNITDIR)/transferd.socket
	rm -rf $(USERPREFIX)/share/doc/transferd
	rm -f $(USERPREFIX)/share/man/man1/transferctl.1 $(USERPREFIX)/share/man/man5/transferd.json.5 $(USERPREFIX)/share/man/man8/transferd.8
	rm -f $(USERPREFIX)/share/bash-completion/completions/transferctl $(USERPREFIX)/share/fish/vendor_completions.d/transferctl.fish
	@if [ -n "$(USER_MANAGER)" ]; then systemctl --user daemon-reload; fi
	@echo "kept: ~/.config/transferd and ~/.local/state/transferd"

clean:
	rm -rf .build .build-fuzz .build-nspawn
