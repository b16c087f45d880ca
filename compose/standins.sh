#!/usr/bin/env bash
# Builds local stand-ins for the official base images the Dockerfiles use,
# for machines that cannot reach a registry (the compose test, CI). Each is
# Debian bookworm from Debian's packages (debootstrap + docker import),
# tagged exactly as the real image, with what the Dockerfiles need from it.
# A stand-in is rebuilt only when this script, or go.mod/go.sum for the Go
# one, changed (the hash is in the image's label).
#
# Usage: compose/standins.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/.."

force=${1:-}
cache=${ARENA_STANDIN_CACHE:-/var/cache/arena-standins}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
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
  local dir="$cache/$name-$(echo "$pkgs" | sha256sum | cut -c1-12)"
  if [ ! -f "$dir/.done" ]; then
    rm -rf "$dir"
    echo "standins: debootstrap $name ($pkgs)" >&2
    debootstrap --variant=minbase --include="$pkgs" bookworm "$dir" "$mirror" >"$cache/$name.log" 2>&1 ||
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

# Go: the machine's own toolchain and the modules go.mod requires, so that
# builds work offline. It trusts the host's certificate authorities too (as
# the real image trusts the public ones), so that a module missing from that
# cache is still fetched through whatever TLS proxy the host goes through.
tag=golang:1.26-bookworm
version="$script_hash-$(cat go.mod go.sum botkits/go/go.mod botkits/go/go.sum 2>/dev/null | sha256sum | cut -c1-12)-$(go env GOVERSION)"
if ! have $tag "$version"; then
  base=$(rootfs go "ca-certificates,git")
  dir="$cache/golang-image"
  rm -rf "$dir" && mkdir -p "$dir"
  cp -a "$base/." "$dir/"
  mkdir -p "$dir/usr/local" "$dir/go/pkg/mod"
  cp -a "$(go env GOROOT)" "$dir/usr/local/go"
  if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    cp /etc/ssl/certs/ca-certificates.crt "$dir/etc/ssl/certs/ca-certificates.crt"
  fi
  GOMODCACHE="$dir/go/pkg/mod" GOFLAGS=-mod=mod go mod download
  # A warm build cache, so that building Arena and the Go bots in the
  # compose test takes seconds, not minutes (the real image starts cold).
  mkdir -p "$dir/root/.cache/go-build"
  GOCACHE="$dir/root/.cache/go-build" CGO_ENABLED=0 go build -trimpath -o /dev/null ./cmd/arena
  (cd botkits/go && GOCACHE="$dir/root/.cache/go-build" CGO_ENABLED=0 go build -trimpath -o /dev/null ./tanks-random)
  import "$dir" $tag "$version" \
    "ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    "ENV GOPATH=/go" "ENV GOTOOLCHAIN=local" "WORKDIR /go"
  rm -rf "$dir"
fi

tag=python:3.11-slim-bookworm
if ! have $tag "$script_hash"; then
  import "$(rootfs python "python3")" $tag "$script_hash" "ENV LANG=C.UTF-8" 'CMD ["python3"]'
fi

tag=node:18-bookworm-slim
if ! have $tag "$script_hash"; then
  import "$(rootfs node "nodejs")" $tag "$script_hash" 'CMD ["node"]'
fi

tag=gcc:12-bookworm
if ! have $tag "$script_hash"; then
  import "$(rootfs gcc "g++,libc6-dev,make")" $tag "$script_hash" 'CMD ["bash"]'
fi
