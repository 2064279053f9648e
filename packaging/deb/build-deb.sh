#!/usr/bin/env bash
# make deb: transferd_VERSION_ARCH.deb from the release build, with dpkg-deb.
#
# The tree is what `make install PREFIX=/usr DESTDIR=…` puts in place (binaries stripped, units,
# sysusers.d and tmpfiles.d files, the configuration, docs, man pages, completions), made Debian's:
# man pages and the changelog compressed, the copyright file (with the years of the history) added, the maintainer scripts of this
# directory, /etc/transferd/transferd.json a conffile, and Depends: from dpkg-shlibdeps, that is,
# from the shared libraries the binaries really load. Never builds: `make deb` runs `make build` first.
#
# Environment: DEB_OUTDIR (where the .deb goes; default the repository), DEB_MAINTAINER (default
# git's user.name <user.email>, else the commit's author), DEB_XZ_LEVEL (the compression, 0 to 9; default 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
HERE=$REPO/packaging/deb
WORK=$REPO/.build/deb
ROOT=$WORK/root
OUTDIR=${DEB_OUTDIR:-$REPO}

die() { echo "make deb: $*" >&2; exit 1; }

for tool in dpkg-deb dpkg-shlibdeps; do
    command -v "$tool" >/dev/null || die "$tool is missing: apt-get install dpkg-dev (make deb does)"
done

# The version the binaries report (Sources/TransferProtocol/RPCMethod.swift). Built from a commit
# that a tag vVERSION names, it is that version; otherwise +git<commits>.<hash> follows it, which
# grows with every commit, so that a newer build upgrades an older one.
upstream=$(sed -n 's/^public let transferdVersion = "\(.*\)"$/\1/p' Sources/TransferProtocol/RPCMethod.swift)
[ -n "$upstream" ] || die "no transferdVersion in Sources/TransferProtocol/RPCMethod.swift"
version=$upstream
if git rev-parse --git-dir >/dev/null 2>&1 && ! git describe --exact-match --tags --match "v$upstream" >/dev/null 2>&1; then
    version="$upstream+git$(git rev-list --count HEAD).$(git rev-parse --short=7 HEAD)"
fi
[ "$(.build/release/transferd --version 2>/dev/null)" = "$upstream" ] \
    || die ".build/release/transferd --version does not say $upstream: run make build again"
arch=$(dpkg --print-architecture)
# Whoever builds it: DEB_MAINTAINER, else git's user, else (a fresh CI machine has none) the author
# of the commit it is built from.
maintainer=${DEB_MAINTAINER:-}
if [ -z "$maintainer" ] && git config user.name >/dev/null 2>&1 && git config user.email >/dev/null 2>&1; then
    maintainer="$(git config user.name) <$(git config user.email)>"
fi
[ -n "$maintainer" ] || maintainer=$(git log -1 --format='%an <%ae>' 2>/dev/null || true)
[ -n "$maintainer" ] || die "set DEB_MAINTAINER='Name <address>' (no git user or history to take it from)"
date=$(git log -1 --format=%cD 2>/dev/null || date -R)

deb=$OUTDIR/transferd_${version}_${arch}.deb
# Up to date when it is the last one made and nothing it is made of changed since (make build writes
# the man pages and completions again each time, from the binaries: theirs is the date that counts).
if [ -f "$deb" ] && [ "$(cat "$WORK/deb-file" 2>/dev/null)" = "$deb" ] && [ -z "$(find .build/release/transferd \
    .build/release/transferctl packaging/deb systemd config docs README.md Makefile -newer "$deb" -print -quit)" ]; then
    echo "$deb (up to date)"
    exit 0
fi

# The package made before, which this one replaces (so that ./transferd_*.deb names one file).
previous=$(cat "$WORK/deb-file" 2>/dev/null || true)

# 1. The files, where make install puts them for PREFIX=/usr, units in /usr/lib/systemd (where
#    lintian expects them; on Debian 12's merged /usr, /lib/systemd is the same directory).
rm -rf "$WORK"
make --no-print-directory install DESTDIR="$ROOT" PREFIX=/usr UNITDIR=/usr/lib/systemd/system \
    USERUNITDIR=/usr/lib/systemd/user SYSUSERSDIR=/usr/lib/sysusers.d TMPFILESDIR=/usr/lib/tmpfiles.d >/dev/null

# 2. Debian's conventions: compressed man pages and changelog, a copyright file, 0755/0644.
find "$ROOT/usr/share/man" -type f -exec gzip -9n {} +
doc=$ROOT/usr/share/doc/transferd
first=$(git log --format=%cs 2>/dev/null | tail -1 | cut -c1-4 || true)
last=$(git log -1 --format=%cs 2>/dev/null | cut -c1-4 || true)
years=${first:-$(date +%Y)}
[ -z "$last" ] || [ "$last" = "$years" ] || years="$years-$last"
sed "s/@YEARS@/$years/" "$HERE/copyright" >"$doc/copyright"
# bash-completion sources its files; the generated ones start with a #! line it does not need.
sed -i '1{/^#!/d}' "$ROOT"/usr/share/bash-completion/completions/*
printf 'transferd (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n\n -- %s  %s\n' \
    "$version" "$(git rev-parse HEAD 2>/dev/null || echo unknown)" "$maintainer" "$date" | gzip -9n >"$doc/changelog.gz"
find "$ROOT" -type d -exec chmod 0755 {} +
find "$ROOT" -type f ! -path "$ROOT/usr/bin/*" -exec chmod 0644 {} +

# 3. Depends: the packages that hold the libraries the binaries load (dpkg-shlibdeps reads their
#    shlibs and symbols files), and what the maintainer scripts run: systemd-sysusers and
#    systemd-tmpfiles (systemd), deb-systemd-helper and deb-systemd-invoke (init-system-helpers).
mkdir -p "$WORK/shlibs/debian"
printf 'Source: transferd\n\nPackage: transferd\nArchitecture: any\n' >"$WORK/shlibs/debian/control"
shlibs=$(cd "$WORK/shlibs" && dpkg-shlibdeps -O "$ROOT/usr/bin/transferd" "$ROOT/usr/bin/transferctl" 2>"$WORK/shlibdeps.log") \
    || die "dpkg-shlibdeps failed: $(cat "$WORK/shlibdeps.log")"
depends=$(sed -n 's/^shlibs:Depends=//p' <<<"$shlibs")
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies: $shlibs"
depends="$depends, systemd, init-system-helpers (>= 1.54~)"

# 4. The control area.
mkdir -p "$ROOT/DEBIAN"
install -m 0755 "$HERE/postinst" "$HERE/prerm" "$HERE/postrm" "$ROOT/DEBIAN/"
(cd "$ROOT" && find etc -type f | sed 's|^|/|' | sort) >"$ROOT/DEBIAN/conffiles"
(cd "$ROOT" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/conffiles" "$ROOT/DEBIAN/md5sums"
size=$(du -sk --apparent-size --exclude=DEBIAN "$ROOT" | cut -f1)
cat >"$ROOT/DEBIAN/control" <<EOF
Package: transferd
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Section: net
Priority: optional
Description: durable background downloads and uploads (daemon and CLI)
 transferd is a systemd service that owns downloads and uploads for its
 clients: every accepted job is journaled before it is acknowledged, and
 transfers continue across client exits, daemon restarts, crashes, reboots
 and network drops, from their last checkpoint. Clients hand a job over a
 Unix socket with transferctl, or from any script.
 .
 The package runs the system service as the transferd user; members of the
 transferd group may submit (usermod -aG transferd USER). Downloads land in
 /srv/transferd by default. Every user may also run their own daemon with
 the user units: systemctl --user enable --now transferd.socket
 transferd.service.
EOF
chmod 0644 "$ROOT/DEBIAN/control"

mkdir -p "$OUTDIR"
# xz -2: measured here 2.5 times as fast as dpkg-deb's default -6, for a package 13% larger.
dpkg-deb --root-owner-group -Zxz -z"${DEB_XZ_LEVEL:-2}" --build "$ROOT" "$deb" >/dev/null
[ -z "$previous" ] || [ "$previous" = "$deb" ] || rm -f "$previous"
# For make deb-check and make systemd-test.
echo "$deb" >"$WORK/deb-file"
echo "$deb"
