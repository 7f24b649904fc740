#!/usr/bin/env bash
# Builds the fleet image offline (no registry): deploy/fleet.Dockerfile on top of the sandbox
# image (sandbox-images/python/build-image.sh, from the debootstrap root cached in
# /var/cache/sandfleet), with this machine's `node` and `bwrap` and the workspace's node_modules.
#
#   deploy/build-fleet-image.sh            # → sandfleet/sandfleet:VERSION (deploy/fleet-image.sh), the chart's image
#   SANDFLEET_FLEET_IMAGE=my/fleet:dev deploy/build-fleet-image.sh
#
# Needs a running Docker engine, `npm ci` done, bubblewrap installed, and a Node 20 built for
# Debian bookworm's glibc (the image runs this machine's binary). Skips the build when the image
# already holds exactly these inputs (their sizes and times, the base image's id).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
image="$(bash "$root/deploy/fleet-image.sh")"
base="${SANDFLEET_DOCKER_IMAGE:-sandfleet/python:1}"
node_bin="$(command -v node)"
bwrap_bin="$(command -v bwrap || true)"
[[ -n "$bwrap_bin" ]] || { echo "build-fleet-image: bubblewrap is missing (apt-get install bubblewrap)" >&2; exit 1; }
[[ -d "$root/node_modules/isolated-vm" ]] || { echo "build-fleet-image: node_modules is missing; run npm ci first" >&2; exit 1; }

SANDFLEET_DOCKER_IMAGE="$base" bash "$root/sandbox-images/python/build-image.sh" >/dev/null

# What goes in, at its path in the build context. Tests, TypeScript's compiler and type
# packages stay out (the image runs the bundle, made by esbuild).
app=(deploy/fleet.Dockerfile package.json package-lock.json bin packages services cli benchmarks
  sandbox-images/python/executor.py sandbox-images/python/session_host.py sandbox-images/python/manifest.py node_modules)
excludes=(--exclude=.cache --exclude=./packages/*/test --exclude=./services/*/test --exclude=./cli/test
  --exclude=./benchmarks/test --exclude=./benchmarks/results --exclude=./node_modules/typescript --exclude=./node_modules/@types)

base_id="$(docker image inspect -f '{{.Id}}' "$base")"
stamp="$( { echo "$base_id"; sha256sum "$node_bin" "$bwrap_bin" | cut -c1-64;
  cd "$root" && find "${app[@]}" -path '*/.cache' -prune -o -printf '%p %s %T@\n' | LC_ALL=C sort; } | sha256sum | cut -c1-16)"
if [[ "$(docker image inspect -f '{{ index .Config.Labels "org.sandfleet.fleet" }}' "$image" 2>/dev/null || true)" == "$stamp" ]]; then
  echo "build-fleet-image: $image is up to date ($stamp)"
  exit 0
fi

echo "build-fleet-image: building $image from $base"
err="$(mktemp)"
trap 'rm -f "$err"' EXIT
# The context as one tar on stdin: node_modules, the app's files under app/ (one layer), node
# and bwrap at the top.
tar --numeric-owner -c -C "$root" "${excludes[@]}" \
    --transform 's,^\./\(package\.json\|package-lock\.json\|bin\|packages\|services\|cli\|benchmarks\|sandbox-images\),app/\1,' \
    $(printf './%s ' "${app[@]}") \
    -C "$(dirname "$node_bin")" "./$(basename "$node_bin")" -C "$(dirname "$bwrap_bin")" "./$(basename "$bwrap_bin")" \
  | docker build -q -f deploy/fleet.Dockerfile --build-arg "BASE=$base" --label "org.sandfleet.fleet=$stamp" -t "$image" - >/dev/null 2>"$err" \
  || { cat "$err" >&2; exit 1; }
echo "build-fleet-image: built $image"
