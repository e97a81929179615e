#!/usr/bin/env bash
# Build docker/<cpu|cuda>.Dockerfile (scripts/build.sh inside) and run scripts/test.sh in it.
# usage: scripts/docker-ci.sh [--cuda | --debian SUITE] [PYTEST_ARGS...]
#   (default: cpu on the Dockerfile's Debian, the whole suite); --debian: the CPU image on
#   debian:SUITE-slim, with that release's python3 (bullseye 3.9, bookworm 3.11, trixie 3.13)
# Uses the Docker daemon at $DOCKER_HOST or /var/run/docker.sock if one answers; else starts
# dockerd (state in $DOCKER_CI_DIR, default .cache/docker) and stops it on exit. A missing
# CPU base image is pulled, or made with debootstrap. Needs root for what it installs or starts.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

flavour=cpu suite=''
case ${1:-} in
    --cuda) flavour=cuda; shift ;;
    --debian) (($# >= 2)) || die "--debian needs a Debian suite (e.g. trixie)"; suite=$2; shift 2 ;;
esac
[[ -z $suite || $suite =~ ^[a-z]+$ ]] || die "--debian: not a Debian suite name: $suite"
dockerfile=docker/$flavour.Dockerfile
image=paddle-static-hooks:$flavour${suite:+-$suite}
state=$(realpath -m "${DOCKER_CI_DIR:-$ROOT/.cache/docker}")
DOCKER=/usr/bin/docker  # Debian's/Docker's client: BuildKit fails with some other builds of it
export DOCKER_BUILDKIT=1
SECONDS=0
cd "$ROOT"

apt_install() {
    if ((EUID != 0)) || ! command -v apt-get >/dev/null; then
        die "needs the Debian package(s) $*: install them (or run this as root, with apt-get)"
    fi
    echo "docker-ci: apt-get install $*"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; } >/dev/null ||
        die "apt-get install $* failed"
}

# Our own daemon: started here, stopped on exit; a leftover of a killed run is stopped first.
locked='' own_daemon='' made_dirs=()
host_dirs=(/run/runc /run/containerd/s /run/containerd /run/docker/plugins /run/docker)
stop_pidfile() {  # stop_pidfile FILE NAME: TERM (then KILL) the process if it is NAME; 1 if none
    local pid i
    pid=$(cat "$1" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ && $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]] || return 1
    kill "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 30; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 1; done
    echo "docker-ci: $2 ($pid) ignored SIGTERM for 30 s; killing it" >&2
    kill -9 "$pid" 2>/dev/null || true
}
state_clean() {  # mounts and run-time files under $state (debootstrap's, our daemon's)
    local m
    awk -v d="$state/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
        umount "$m" || umount -l "$m" || echo "error: cannot unmount $m" >&2
    done
    rm -rf --one-file-system -- "$state/exec" "$state/docker.sock" "$state"/rootfs.*
}
daemon_stop() {
    local d
    # A killed run's daemon: the run-time dirs are its too (rmdir leaves any in use).
    if stop_pidfile "$state/dockerd.pid" dockerd && [[ -z $own_daemon ]]; then made_dirs=("${host_dirs[@]}"); fi
    stop_pidfile "$state/exec/containerd/containerd.pid" containerd || true
    state_clean
    for d in "${made_dirs[@]}"; do rmdir -- "$d" 2>/dev/null || true; done
}
daemon_start() {
    local d i
    ((EUID == 0)) || die "no Docker daemon answers, and starting one needs root"
    [[ -x /usr/sbin/dockerd ]] || apt_install docker.io
    mkdir -p "$state"
    for d in "${host_dirs[@]}"; do [[ -e $d ]] || made_dirs+=("$d"); done
    # Its own config, not /etc/docker/daemon.json, and its key not in /etc/docker.
    printf '{"deprecated-key-path": "%s"}\n' "$state/key.json" >"$state/daemon.json"
    own_daemon=1
    # No bridge, iptables or ip_forward changes on the host: builds and runs use --network host|none.
    /usr/sbin/dockerd --config-file "$state/daemon.json" --data-root "$state/data" \
        --exec-root "$state/exec" --pidfile "$state/dockerd.pid" -H "unix://$state/docker.sock" \
        --bridge=none --iptables=false --ip-forward=false --ip-masq=false >"$state/dockerd.log" 2>&1 8>&- &
    export DOCKER_HOST=unix://$state/docker.sock
    for ((i = 0; i < 60; i++)); do
        "$DOCKER" info >/dev/null 2>&1 && { echo "docker-ci: started dockerd ($DOCKER_HOST)"; return; }
        kill -0 $! 2>/dev/null || break
        sleep 1
    done
    tail -n 20 "$state/dockerd.log" >&2
    die "dockerd did not come up (log above: $state/dockerd.log)"
}
on_exit() {  # called by lib.sh's EXIT trap, before it removes the cleanup_add paths
    if [[ -n $own_daemon ]]; then daemon_stop; elif [[ -n $locked ]]; then state_clean; fi
}

# A CPU base image that no registry serves here: debootstrap + docker import.
base_image_make() {
    local base=$1 suite rootfs
    [[ $base =~ ^debian:([a-z]+) ]] || die "no $base image and cannot make one (only debian:<suite>[-slim])"
    suite=${BASH_REMATCH[1]}
    command -v debootstrap >/dev/null || apt_install debootstrap
    rootfs=$(mktemp -d "$state/rootfs.XXXXXX")
    cleanup_add "$rootfs"
    echo "docker-ci: no $base image and no registry; debootstrap --variant=minbase $suite ..."
    debootstrap --variant=minbase "$suite" "$rootfs" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" \
        >"$state/debootstrap.log" 2>&1 || die "debootstrap failed (log: $state/debootstrap.log)"
    rm -rf -- "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
    tar -C "$rootfs" -c . | "$DOCKER" import - "$base" >/dev/null || die "docker import of $rootfs failed"
    rm -rf -- "$rootfs"
}

[[ -x $DOCKER ]] || apt_install docker.io
mkdir -p "$state"
exec 8>"$state/lock"
flock -n 8 || die "another scripts/docker-ci.sh is running with state in $state"
locked=1
daemon_stop  # what a killed run left
if [[ -n ${DOCKER_HOST:-} ]]; then
    "$DOCKER" info >/dev/null 2>&1 || die "no Docker daemon answers at DOCKER_HOST=$DOCKER_HOST"
elif "$DOCKER" info >/dev/null 2>&1; then
    echo "docker-ci: using the running Docker daemon"
else
    daemon_start
fi

base=$(sed -n 's/^ARG BASE_IMAGE=//p' "$dockerfile")
build_args=()
if [[ -n $suite ]]; then base=debian:$suite-slim; build_args=(--build-arg "BASE_IMAGE=$base"); fi
if [[ $flavour == cpu ]] && ! "$DOCKER" image inspect "$base" >/dev/null 2>&1; then
    "$DOCKER" pull -q "$base" 2>/dev/null || base_image_make "$base"
fi

# The host's extra CA certificates (e.g. of a TLS-intercepting proxy), for pip in the build.
for c in /usr/local/share/ca-certificates/*.crt; do
    [[ -f $c ]] || continue
    cleanup_add "$ROOT/docker/ca-certificates/${c##*/}"
    cp -- "$c" docker/ca-certificates/
done

"$DOCKER" build --progress plain --network host "${build_args[@]}" -f "$dockerfile" -t "$image" . ||
    die "docker build -f $dockerfile failed"
if [[ -n $own_daemon ]]; then  # earlier builds' images and cache, in our daemon only
    "$DOCKER" image prune -f >/dev/null && "$DOCKER" builder prune -f --keep-storage 4GB >/dev/null ||
        echo "docker-ci: warning: pruning old images and build cache failed" >&2
fi
gpus=()
[[ $flavour == cpu ]] || gpus=(--gpus all)
rc=0
"$DOCKER" run --rm --network none "${gpus[@]}" "$image" scripts/test.sh "$@" || rc=$?
((rc == 0)) || die "scripts/test.sh${*:+ $*} failed in a $image container (exit $rc)"
size=$("$DOCKER" image inspect -f '{{.Size}}' "$image")
echo "docker-ci: $image ($((size / 1000000)) MB) built and tested in ${SECONDS}s"
