#!/usr/bin/env bash
# Builds the sandbox image offline: the rootfs of build-rootfs.sh, imported into the local
# Docker engine under the same name and tag as the Dockerfile's image (no registry needed).
#
#   sandbox-images/python/build-image.sh [ROOTFS_DIR]
#
# ROOTFS_DIR defaults as in build-rootfs.sh; the image name is $SANDFLEET_DOCKER_IMAGE or
# sandfleet/python:1. Needs a running Docker engine (`dockerd &`, then `docker info`).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-${SANDFLEET_ROOTFS_DIR:-/var/cache/sandfleet/rootfs-python}}"
image="${SANDFLEET_DOCKER_IMAGE:-sandfleet/python:1}"

docker info >/dev/null 2>&1 || { echo "build-image: the Docker engine does not answer; start it (dockerd &) and retry" >&2; exit 1; }
"$here/build-rootfs.sh" "$dir"
[[ -f "$dir/opt/sandfleet/executor.py" ]] || { echo "build-image: $dir has no executor" >&2; exit 1; }

# Skip the import when the image already holds exactly this rootfs (same content hash).
# The base is fixed once built (its marker's time names it); the executor, manifest, /work mode
# and this script's import flags change.
stamp="$( { stat -c %Y "$dir/.sandfleet-base-complete"; stat -c %a "$dir/work"; cat "$here/build-image.sh"; cat "$dir/opt/sandfleet/executor.py" "$dir/opt/sandfleet/manifest.json"; } | sha256sum | cut -c1-16)"
if [[ "$(docker image inspect -f '{{ index .Config.Labels "org.sandfleet.rootfs" }}' "$image" 2>/dev/null || true)" == "$stamp" ]]; then
  echo "build-image: $image is up to date ($stamp)"
  exit 0
fi

echo "build-image: importing $dir as $image"
tar --numeric-owner --exclude=./.sandfleet-base-complete -C "$dir" -c . | docker import \
  --change 'USER 65534:65534' \
  --change 'WORKDIR /tmp' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 LANG=C.UTF-8' \
  --change "LABEL org.sandfleet.rootfs=$stamp org.sandfleet.manifest=/opt/sandfleet/manifest.json" \
  --change 'CMD ["/usr/bin/python3", "-I", "/opt/sandfleet/executor.py"]' \
  - "$image" >/dev/null
echo "build-image: built $image"
