#!/usr/bin/env bash
# npm run setup:docker: everything `vncua eval --provider docker` needs, idempotent.
#   1. the docker CLI and engine (apt-get install docker.io where `docker` is missing);
#   2. a daemon that answers (`systemctl start docker` under systemd, else dockerd in the
#      background, its log in $VNCUA_DOCKERD_LOG, default /var/log/vncua-dockerd.log);
#   3. the base image debian:bookworm-slim: kept if present, else pulled, else (no registry:
#      air-gapped machines) built from Debian's packages by docker/base-image.sh (debootstrap);
#   4. the desktop image (vncua-desktop, or $VNCUA_DOCKER_IMAGE) built from docker/ with
#      --network host, unless the image there was built from the same docker/ files (label
#      vncua.context, a hash of them), so a second run is instant.
# Nothing is downloaded but Debian packages (and, when a registry answers, the official base).
#
#   scripts/setup-docker.sh [--no-pull] [--rebuild] [--check]
#     --no-pull   never try the registry for the base image (go straight to debootstrap)
#     --rebuild   build the desktop image even when it is up to date
#     --check     change nothing: exit 0 when the engine answers and the image is up to date,
#                 else print the first missing piece (its code) and exit 1
#
# Errors are one line "setup-docker: CODE: what happened; what to run" (codes in docs/ERRORS.md)
# and exit 1. Exit 2: bad arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${VNCUA_DOCKER_IMAGE:-vncua-desktop}
BASE=debian:bookworm-slim
DOCKERD_LOG=${VNCUA_DOCKERD_LOG:-/var/log/vncua-dockerd.log}
CONTEXT_FILES=(docker/Dockerfile docker/start.sh docker/ws-bridge.py docker/cdp-bridge.py)
pull=1 rebuild=0 check=0
ROOT_CODE=DOCKER_ERR_NOT_INSTALLED

for arg in "$@"; do
  case $arg in
    --no-pull) pull=0 ;;
    --rebuild) rebuild=1 ;;
    --check) check=1 ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup-docker: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "setup-docker: $*" >&2; }
fail() { say "$1: $2"; exit 1; }

SUDO=""
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    fail "$ROOT_CODE" "need root to run: $*"
  fi
}

# The hash of the files the image is built from (its vncua.context label).
context_hash() { cat "${CONTEXT_FILES[@]}" | sha256sum | cut -c1-16; }

daemon_answers() { timeout 15 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

# 1. The CLI, and the engine when this machine must run its own (some machines have only a client).
if ! command -v docker >/dev/null 2>&1 || { [ -z "${DOCKER_HOST:-}" ] && ! command -v dockerd >/dev/null 2>&1 && ! daemon_answers; }; then
  [ "$check" = 0 ] || fail DOCKER_ERR_NOT_INSTALLED "Docker (the docker CLI or dockerd) is not installed; run: npm run setup:docker"
  say "installing docker.io (apt-get)"
  ROOT_CODE=DOCKER_ERR_NOT_INSTALLED
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq || fail DOCKER_ERR_NOT_INSTALLED "apt-get update failed; install Docker by hand (apt-get install docker.io)"
  as_root apt-get install -y -qq --no-install-recommends docker.io >/dev/null ||
    fail DOCKER_ERR_NOT_INSTALLED "apt-get install docker.io failed; install Docker by hand"
fi

# 2. The daemon.
if ! daemon_answers; then
  [ "$check" = 0 ] || fail DOCKER_ERR_DAEMON "no Docker daemon answers; run: npm run setup:docker (starts dockerd)"
  ROOT_CODE=DOCKER_ERR_DAEMON
  if [ -n "${DOCKER_HOST:-}" ]; then
    fail DOCKER_ERR_DAEMON "DOCKER_HOST=$DOCKER_HOST does not answer; start that daemon, or unset DOCKER_HOST to use a local one"
  fi
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    say "starting the docker service (systemctl start docker; log: journalctl -u docker)"
    as_root systemctl start docker || fail DOCKER_ERR_DAEMON "systemctl start docker failed; see: journalctl -u docker"
    where="journalctl -u docker"
  else
    command -v dockerd >/dev/null 2>&1 || fail DOCKER_ERR_NOT_INSTALLED "dockerd is not installed (only the client is); run: apt-get install docker.io"
    say "starting dockerd in the background (log: $DOCKERD_LOG)"
    as_root mkdir -p "$(dirname "$DOCKERD_LOG")"
    # setsid: the daemon outlives this script and its terminal; its output goes to the log.
    as_root setsid sh -c 'exec dockerd >>"$1" 2>&1 </dev/null' sh "$DOCKERD_LOG" &
    where=$DOCKERD_LOG
  fi
  for _ in $(seq 1 120); do
    daemon_answers && break
    sleep 0.5
  done
  daemon_answers || fail DOCKER_ERR_DAEMON "dockerd did not answer within 60 s; its log: $where"
  say "the daemon answers ($(docker version --format '{{.Server.Version}}'))"
fi

# 3 + 4. The images.
want=$(context_hash)
have=$(docker image inspect --format '{{index .Config.Labels "vncua.context"}}' "$IMAGE" 2>/dev/null || true)
if [ "$check" = 1 ]; then
  [ -n "$have" ] || fail DOCKER_ERR_NO_IMAGE "the image $IMAGE is missing; run: npm run setup:docker"
  [ "$have" = "$want" ] || fail DOCKER_ERR_NO_IMAGE "the image $IMAGE was built from other docker/ files ($have, now $want); run: npm run setup:docker"
  say "ok: the daemon answers and $IMAGE is up to date"
  exit 0
fi
if [ "$have" = "$want" ] && [ "$rebuild" = 0 ]; then
  say "the image $IMAGE is up to date ($(docker image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"
  exit 0
fi

if ! docker image inspect "$BASE" >/dev/null 2>&1; then
  if [ "$pull" = 1 ] && timeout 120 docker pull -q "$BASE" >/dev/null 2>&1; then
    say "pulled $BASE"
  else
    [ "$pull" = 1 ] && say "cannot pull $BASE (no registry reachable); building it from Debian's packages"
    ROOT_CODE=DOCKER_ERR_BASE_IMAGE
    if ! command -v debootstrap >/dev/null 2>&1; then
      say "installing debootstrap (apt-get)"
      as_root apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
        { as_root apt-get update -qq && as_root apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; } ||
        fail DOCKER_ERR_BASE_IMAGE "cannot install debootstrap; install it, or load $BASE (docker load)"
    fi
    as_root bash docker/base-image.sh --tag "$BASE" >/dev/null || fail DOCKER_ERR_BASE_IMAGE "building $BASE with debootstrap failed (see above)"
    say "built $BASE from Debian's packages (debootstrap)"
  fi
fi

log=$(mktemp "${TMPDIR:-/tmp}/vncua-docker-build.XXXXXX")
say "building $IMAGE from docker/ (log: $log)"
start=$SECONDS
if ! docker build --network host --label "vncua.context=$want" -t "$IMAGE" docker/ >"$log" 2>&1; then
  tail -n 15 "$log" >&2
  fail DOCKER_ERR_BUILD_FAILED "docker build failed (full log: $log); fix it, then run: npm run setup:docker"
fi
rm -f "$log"
size=$(docker image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}')
say "built $IMAGE in $((SECONDS - start)) s ($size)"
