#!/usr/bin/env bash
# Builds the vncua worker image (docker/worker/Dockerfile: the desktop image + Node.js + vncua),
# the image docs/kubernetes.md's Indexed Job runs.
#   1. the desktop image, through scripts/setup-docker.sh (engine, base image, vncua-desktop);
#   2. the Node stage: node:20-bookworm-slim when it can be pulled; else (no registry: air-gapped
#      machines, this one) an image vncua-node:20 made from this machine's own Node.js >= 20.3 and
#      npm, on debian:bookworm-slim with libstdc++6 from Debian's packages;
#   3. docker build --network host -f docker/worker/Dockerfile -t vncua-worker . (npm ci inside:
#      only npm packages are downloaded).
#
# Skipped when the image was built from the same sources (label vncua.context: a hash of the files
# the build copies, as .dockerignore selects them, and of the desktop image's id).
#
#   scripts/build-worker-image.sh [--tag vncua-worker] [--no-pull] [--rebuild] [--check]
#     --check   change nothing: exit 0 when the image is up to date, else say why and exit 1
# Errors are one line "build-worker-image: CODE: what happened; what to run" and exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."

tag=vncua-worker pull=1 rebuild=0 check=0
while [ $# -gt 0 ]; do
  case $1 in
    --tag) tag=${2:?--tag needs a value}; shift 2 ;;
    --no-pull) pull=0; shift ;;
    --rebuild) rebuild=1; shift ;;
    --check) check=1; shift ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-worker-image: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
say() { echo "build-worker-image: $*" >&2; }
fail() { echo "build-worker-image: $1: $2" >&2; exit 1; }

desktop=${VNCUA_DOCKER_IMAGE:-vncua-desktop}
# The files the build copies (docker/worker/Dockerfile's COPY lines, tests left out as .dockerignore does).
context_hash() {
  {
    docker image inspect -f '{{.Id}}' "$desktop" 2>/dev/null || echo none
    find package.json package-lock.json bin index.ts tsconfig.json harness agents byom recorder eval viewer cli docker schemas \
      -type f ! -name '*.test.ts' ! -path '*/node_modules/*' ! -path 'eval/*/runs/*' -print0 | sort -z | xargs -0 sha256sum
  } | sha256sum | cut -c1-16
}
if [ "$check" = 1 ]; then
  bash scripts/setup-docker.sh --check >&2 || exit 1
  have=$(docker image inspect -f '{{index .Config.Labels "vncua.context"}}' "$tag" 2>/dev/null || true)
  [ -n "$have" ] || fail DOCKER_ERR_NO_IMAGE "no image $tag; run: scripts/build-worker-image.sh"
  [ "$have" = "$(context_hash)" ] || fail DOCKER_ERR_NO_IMAGE "$tag was built from other sources; run: scripts/build-worker-image.sh"
  exit 0
fi
bash scripts/setup-docker.sh $([ "$pull" = 0 ] && echo --no-pull) >&2
want=$(context_hash)
if [ "$rebuild" = 0 ] && [ "$(docker image inspect -f '{{index .Config.Labels "vncua.context"}}' "$tag" 2>/dev/null || true)" = "$want" ]; then
  say "the image $tag is up to date"
  exit 0
fi

node_image=node:20-bookworm-slim
if ! docker image inspect "$node_image" >/dev/null 2>&1; then
  if [ "$pull" = 1 ] && docker pull -q "$node_image" >/dev/null 2>&1; then
    say "pulled $node_image"
  else
    node_image=vncua-node:20
    node_bin=$(command -v node) || fail DOCKER_ERR_BUILD_FAILED "no node on PATH to make $node_image from; install Node.js >= 20.3"
    version=$(node -p 'process.versions.node')
    node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>20||(a===20&&b>=3)?0:1)' \
      || fail DOCKER_ERR_BUILD_FAILED "this machine's Node.js is $version; the image needs >= 20.3"
    have=$(docker image inspect -f '{{index .Config.Labels "vncua.node"}}' "$node_image" 2>/dev/null || true)
    if [ "$have" != "$version" ]; then
      say "cannot pull node:20-bookworm-slim; making $node_image from this machine's Node.js $version"
      ctx=$(mktemp -d)
      trap 'rm -rf "$ctx"' EXIT
      mkdir -p "$ctx/bin" "$ctx/lib"
      cp "$(readlink -f "$node_bin")" "$ctx/bin/node"
      cp -r "$(npm root -g)/npm" "$ctx/lib/npm"
      cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libstdc++6 ca-certificates && rm -rf /var/lib/apt/lists/*
COPY bin/node /usr/local/bin/node
COPY lib/npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && node --version && npm --version
LABEL vncua.node=$version
DOCKERFILE
      docker build -q --network host -t "$node_image" "$ctx" >/dev/null || fail DOCKER_ERR_BUILD_FAILED "building $node_image failed; run: docker build --network host $ctx"
    fi
  fi
fi

# A TLS-inspecting proxy's CA (this machine has one): npm inside the build must trust it too.
extra_ca=()
ca_files=(${VNCUA_EXTRA_CA_FILE:-/usr/local/share/ca-certificates/*.crt})
if [ -e "${ca_files[0]}" ]; then extra_ca=(--build-arg "EXTRA_CA_PEM=$(cat "${ca_files[@]}")"); fi

log=$(mktemp "${TMPDIR:-/tmp}/vncua-worker-build.XXXXXX")
say "building $tag from docker/worker/Dockerfile on $desktop and $node_image (log: $log)"
if ! docker build --network host -f docker/worker/Dockerfile \
  --label "vncua.context=$want" --build-arg "NODE_IMAGE=$node_image" --build-arg "DESKTOP_IMAGE=$desktop" "${extra_ca[@]}" -t "$tag" . >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  fail DOCKER_ERR_BUILD_FAILED "docker build of $tag failed (full log: $log)"
fi
say "built $tag ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%d MB", $1/1000000}'))"
