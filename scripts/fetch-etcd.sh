#!/usr/bin/env bash
# Puts the etcd server of another Debian release under .cache/etcd-<suite>/ (default: trixie,
# Debian 13, whose etcd 3.5 orders its watch progress answers, unlike bookworm's 3.4.23), so
# the etcd tests run against both without installing anything: the package is taken from the
# Debian archive, checked against the archive's signed index (the machine's own Debian
# keyring), and only its `etcd` binary is unpacked. Safe to run again; prints the binary's
# absolute path.
#
#   bash scripts/fetch-etcd.sh [suite]      DEBIAN_MIRROR=http://... to use another mirror
set -euo pipefail
cd "$(dirname "$0")/.."

suite=${1:-trixie}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
arch=$(dpkg --print-architecture)
dest=.cache/etcd-$suite
if [ -x "$dest/etcd" ] && "$dest/etcd" --version >/dev/null 2>&1; then
  echo "$PWD/$dest/etcd"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
get() { curl -fsSL --retry 3 --retry-delay 2 --max-time 300 "$1" -o "$2"; }

# The index's hash comes from the signed Release text, the package's hash from the index.
get "$mirror/dists/$suite/InRelease" "$tmp/InRelease"
gpgv --quiet --keyring "$keyring" --output "$tmp/Release" "$tmp/InRelease" 2>"$tmp/gpgv.log" || {
  cat "$tmp/gpgv.log" >&2
  echo "fetch-etcd: the $suite Release file's signature does not check out against $keyring" >&2
  exit 1
}
index=main/binary-$arch/Packages.gz
index_sha=$(awk -v f="$index" '/^SHA256:/ { s = 1; next } /^[^ ]/ { s = 0 } s && $3 == f { print $1 }' "$tmp/Release")
[ -n "$index_sha" ] || { echo "fetch-etcd: $index is not listed in the $suite Release file" >&2; exit 1; }
get "$mirror/dists/$suite/$index" "$tmp/Packages.gz"
echo "$index_sha  $tmp/Packages.gz" | sha256sum --check --quiet --strict

# The etcd-server stanza (paragraphs are separated by blank lines).
gzip -dc "$tmp/Packages.gz" | awk -v RS= '/(^|\n)Package: etcd-server\n/' > "$tmp/stanza"
field() { sed -n "s/^$1: //p" "$tmp/stanza" | head -1; }
file=$(field Filename)
sha=$(field SHA256)
[ -n "$file" ] && [ -n "$sha" ] || { echo "fetch-etcd: no etcd-server package in $suite ($arch)" >&2; exit 1; }
get "$mirror/$file" "$tmp/etcd-server.deb"
echo "$sha  $tmp/etcd-server.deb" | sha256sum --check --quiet --strict

dpkg-deb --fsys-tarfile "$tmp/etcd-server.deb" | tar -x -C "$tmp" ./usr/bin/etcd
"$tmp/usr/bin/etcd" --version >/dev/null
mkdir -p "$dest"
mv "$tmp/usr/bin/etcd" "$dest/etcd"
echo "$PWD/$dest/etcd"
