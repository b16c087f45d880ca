#!/usr/bin/env bash
# Builds local stand-ins for the official base images the Dockerfiles use,
# for machines that cannot reach a registry (the compose test, CI). Each is
# Debian trixie (13, the current stable) from Debian's packages (debootstrap
# + docker import), tagged exactly as the real image, with what the
# Dockerfiles need from it. Where Debian's package is another version than
# the tag's, the comment at the tag says so: the kits must work on both. A
# stand-in is rebuilt only when this script, or go.mod/go.sum for the Go
# one, changed (the hash is in the image's label). Images of other tags
# (an older stand-in still in use elsewhere) are left alone.
#
# Usage: compose/standins.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/.."

force=${1:-}
cache=${ARENA_STANDIN_CACHE:-/var/cache/arena-standins}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=trixie
mkdir -p "$cache"

command -v debootstrap >/dev/null || {
  echo "standins: installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}

script_hash=$(sha256sum "$0" | cut -c1-16)

# have TAG VERSION: the image exists with this version label.
have() {
  [ "$force" != "--force" ] &&
    [ "$(docker image inspect -f '{{index .Config.Labels "io.arena.standin"}}' "$1" 2>/dev/null || true)" = "$2" ]
}

# rootfs NAME PACKAGES: a debootstrapped folder, cached by package list.
rootfs() {
  local name=$1 pkgs=$2
  local dir="$cache/$name-$(echo "$suite $pkgs" | sha256sum | cut -c1-12)"
  if [ ! -f "$dir/.done" ]; then
    rm -rf "$dir"
    echo "standins: debootstrap $name ($pkgs)" >&2
    debootstrap --variant=minbase --include="$pkgs" "$suite" "$dir" "$mirror" >"$cache/$name.log" 2>&1 ||
      { echo "standins: debootstrap failed, see $cache/$name.log" >&2; exit 1; }
    chroot "$dir" apt-get clean
    rm -rf "$dir"/var/lib/apt/lists/*
    touch "$dir/.done"
  fi
  echo "$dir"
}

# import DIR TAG VERSION CHANGES...: the folder as an image.
import() {
  local dir=$1 tag=$2 version=$3
  shift 3
  local args=(--change "LABEL io.arena.standin=$version")
  for c in "$@"; do args+=(--change "$c"); done
  tar --exclude=./.done -C "$dir" -c . | docker import "${args[@]}" - "$tag" >/dev/null
  echo "standins: built $tag"
}

# The roots of the missing stand-ins are debootstrapped at once, before
# the images are made one by one: each spends most of its time waiting on
# the mirror or the disk, and together they take about as long as the
# longest alone.
jobs=()
want() { # TAG VERSION NAME PACKAGES
  if ! have "$1" "$2"; then
    rootfs "$3" "$4" >/dev/null &
    jobs+=($!)
  fi
}
go_version="$script_hash-$(cat go.mod go.sum botkits/go/go.mod botkits/go/go.sum 2>/dev/null | sha256sum | cut -c1-12)-$(go env GOVERSION)"
want golang:1.26-trixie "$go_version" go "ca-certificates,git"
# The Go stand-in's module cache and a warm build cache, so that building
# Arena and the Go bots in the compose test takes seconds, not minutes
# (the real image starts cold): made meanwhile. Of the modules it keeps
# only the downloads (cache/download: their zips, ~1,200 files); the
# platform's build unpacks them at its `go mod download`, offline. The
# unpacked trees are 43,000 files, and where Docker stores layers with
# fuse-overlayfs every build step walks every file of its image: a step
# on this image took 14 s with them, 6 s without.
extras="$cache/golang-extras"
if ! have golang:1.26-trixie "$go_version"; then
  rm -rf "$extras" && mkdir -p "$extras/mod" "$extras/go-build"
  (
    set -e
    GOMODCACHE="$extras/mod" GOFLAGS=-mod=mod go mod download
    GOCACHE="$extras/go-build" CGO_ENABLED=0 go build -trimpath -o /dev/null ./cmd/arena
    cd botkits/go && GOCACHE="$extras/go-build" CGO_ENABLED=0 go build -trimpath -o /dev/null ./tanks-random
    chmod -R u+w "$extras/mod"
    find "$extras/mod" -mindepth 1 -maxdepth 1 ! -name cache -exec rm -rf {} +
  ) >"$cache/golang-extras.log" 2>&1 || { echo "standins: the Go caches failed, see $cache/golang-extras.log" >&2; exit 1; } &
  jobs+=($!)
fi
want python:3.14-slim-trixie "$script_hash" python "python3"
want node:24-trixie-slim "$script_hash" node "nodejs"
want gcc:15-trixie "$script_hash" gcc "g++,libc6-dev,make"
for j in "${jobs[@]}"; do
  wait "$j" || exit 1
done

# Go: the machine's own toolchain and the modules go.mod requires, so that
# builds work offline. It trusts the host's certificate authorities too (as
# the real image trusts the public ones), so that a module missing from that
# cache is still fetched through whatever TLS proxy the host goes through.
# The real image: Go 1.26 on Debian trixie. The stand-in holds the host's
# Go (go1.26.x), so its version matches the tag's.
tag=golang:1.26-trixie
version=$go_version
if ! have $tag "$version"; then
  base=$(rootfs go "ca-certificates,git")
  dir="$cache/golang-image"
  rm -rf "$dir" && mkdir -p "$dir"
  cp -a "$base/." "$dir/"
  mkdir -p "$dir/usr/local" "$dir/go/pkg" "$dir/root/.cache"
  cp -a "$(go env GOROOT)" "$dir/usr/local/go"
  if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    cp /etc/ssl/certs/ca-certificates.crt "$dir/etc/ssl/certs/ca-certificates.crt"
  fi
  mv "$extras/mod" "$dir/go/pkg/mod"
  mv "$extras/go-build" "$dir/root/.cache/go-build"
  import "$dir" $tag "$version" \
    "ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    "ENV GOPATH=/go" "ENV GOTOOLCHAIN=local" "WORKDIR /go"
  rm -rf "$dir" "$extras"
fi

# The real image: Python 3.14 on Debian trixie (supported until 2030).
# Debian's python3 is 3.13: the stand-in runs the kit on 3.13, the real
# image on 3.14.
tag=python:3.14-slim-trixie
if ! have $tag "$script_hash"; then
  import "$(rootfs python "python3")" $tag "$script_hash" "ENV LANG=C.UTF-8" 'CMD ["python3"]'
fi

# The real image: Node.js 24 on Debian trixie, an LTS line supported until
# April 2028. Debian's nodejs is 20: the stand-in runs the kit on Node.js
# 20, the real image on 24.
tag=node:24-trixie-slim
if ! have $tag "$script_hash"; then
  import "$(rootfs node "nodejs")" $tag "$script_hash" 'CMD ["node"]'
fi

# The real image: GCC 15 on Debian trixie (with apt, as there, so that a
# bot's Dockerfile can install a C library from Debian). Debian's g++ is
# 14: the stand-in compiles the kit with GCC 14, the real image with 15.
tag=gcc:15-trixie
if ! have $tag "$script_hash"; then
  import "$(rootfs gcc "g++,libc6-dev,make")" $tag "$script_hash" 'CMD ["bash"]'
fi
