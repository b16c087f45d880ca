#!/bin/sh
# Install gVisor (runsc) from Debian's packages and register it with the
# running Docker engine as the runtime "runsc", without restarting dockerd.
#
# Idempotent: safe to run again; it changes daemon.json only when the runsc
# entry differs, and reloads dockerd (SIGHUP) only then.
#
# Run as root on Debian 12 (bookworm) with Docker 20.10 (docker.io) already
# running. Environment overrides:
#   DAEMON_JSON   daemon configuration (default /etc/docker/daemon.json)
#   RUNSC_ARGS    runtimeArgs, space separated
#                 (default "--network=none --host-fifo=open --platform=ptrace")
#   WAIT_SECONDS  how long to wait for `docker info` to list runsc (default 60)
#   SMOKE_TEST    1 (default) runs a scratch container under runsc at the end
set -eu

DAEMON_JSON=${DAEMON_JSON:-/etc/docker/daemon.json}
RUNSC_ARGS=${RUNSC_ARGS:-"--network=none --host-fifo=open --platform=ptrace"}
WAIT_SECONDS=${WAIT_SECONDS:-60}
SMOKE_TEST=${SMOKE_TEST:-1}

log() { printf 'install-runsc: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"
command -v docker >/dev/null 2>&1 || die "the docker client is not installed"
docker info >/dev/null 2>&1 || die "the Docker engine is not reachable"

# 1. Packages: runsc (gVisor) and jq (to edit daemon.json).
need=""
command -v runsc >/dev/null 2>&1 || need="$need runsc"
command -v jq >/dev/null 2>&1 || need="$need jq"
if [ -n "$need" ]; then
	log "installing$need"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $need
fi
RUNSC=$(command -v runsc)
log "using $RUNSC ($("$RUNSC" --version 2>/dev/null | head -n1))"

# 2. Merge the runtime into daemon.json, keeping every other key.
mkdir -p "$(dirname "$DAEMON_JSON")"
if [ -s "$DAEMON_JSON" ]; then
	jq -e 'type == "object"' "$DAEMON_JSON" >/dev/null 2>&1 ||
		die "$DAEMON_JSON is not a JSON object; not touching it"
	current=$DAEMON_JSON
else
	current=/dev/null
fi
args_json=$(printf '%s\n' $RUNSC_ARGS | jq -R . | jq -s -c .)
tmp=$(mktemp "$DAEMON_JSON.XXXXXX")
trap 'rm -f "$tmp"' EXIT
if [ "$current" = /dev/null ]; then
	echo '{}'
else
	cat "$current"
fi | jq --arg path "$RUNSC" --argjson args "$args_json" \
	'.runtimes = ((.runtimes // {}) + {runsc: {path: $path, runtimeArgs: $args}})' >"$tmp"

changed=1
if [ "$current" != /dev/null ] &&
	[ "$(jq -S -c . "$current")" = "$(jq -S -c . "$tmp")" ]; then
	changed=0
fi

if [ "$changed" = 1 ]; then
	if [ "$current" != /dev/null ] && [ ! -e "$DAEMON_JSON.pre-runsc" ]; then
		cp -p "$DAEMON_JSON" "$DAEMON_JSON.pre-runsc"
	fi
	chmod 0644 "$tmp"
	mv -f "$tmp" "$DAEMON_JSON"
	trap - EXIT
	log "updated $DAEMON_JSON: runtimes.runsc = {path: $RUNSC, runtimeArgs: $args_json}"
else
	log "$DAEMON_JSON already registers runsc as wanted"
fi

# 3. Reload dockerd (SIGHUP re-reads daemon.json; running containers are
#    untouched). Reload also when the file was right but the engine does
#    not have the runtime as wanted yet (e.g. the file was edited by hand).
want=$(jq -n -S -c --arg path "$RUNSC" --argjson args "$args_json" '{path: $path, runtimeArgs: $args}')
has_runsc() {
	[ "$(docker info --format '{{json .Runtimes.runsc}}' 2>/dev/null | jq -S -c . 2>/dev/null)" = "$want" ]
}
if [ "$changed" = 1 ] || ! has_runsc; then
	pid=""
	if [ -s /var/run/docker.pid ]; then
		pid=$(cat /var/run/docker.pid)
	fi
	if [ -z "$pid" ] || [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != dockerd ]; then
		pid=$(pidof dockerd || true)
	fi
	case "$pid" in
	'' | *' '*) die "cannot tell which dockerd to reload (found: '${pid}')" ;;
	esac
	log "sending SIGHUP to dockerd ($pid)"
	kill -HUP "$pid"
fi

# 4. Wait until the engine lists the runtime.
i=0
until has_runsc; do
	i=$((i + 1))
	[ "$i" -le "$WAIT_SECONDS" ] ||
		die "docker info does not list runsc as $want after ${WAIT_SECONDS}s (see dockerd's log: an invalid daemon.json is rejected on reload)"
	sleep 1
done
log "docker info lists the runtime: $(docker info --format '{{json .Runtimes.runsc}}')"

# 5. Smoke test: a FROM-scratch image holding the static docker-init (tini),
#    run under runsc with the network off. Nothing is pulled.
if [ "$SMOKE_TEST" = 1 ]; then
	init=$(readlink -f /usr/bin/docker-init 2>/dev/null || true)
	if [ -n "$init" ] && [ -x "$init" ] && ! file "$init" 2>/dev/null | grep -q 'dynamically linked'; then
		ctx=$(mktemp -d)
		cp "$init" "$ctx/tini"
		tar -C "$ctx" -cf - tini |
			docker import -c 'ENTRYPOINT ["/tini", "--version"]' - runsc-smoke:latest >/dev/null
		rm -rf "$ctx"
		out=$(docker run --rm --runtime=runsc --network=none runsc-smoke:latest 2>&1) ||
			die "docker run --runtime=runsc failed: $out"
		log "smoke test under runsc: $out"
		docker rmi -f runsc-smoke:latest >/dev/null 2>&1 || true
	else
		log "smoke test skipped (no static docker-init to build a scratch image from)"
	fi
fi
log "done"
