#!/usr/bin/env bash
# Builds the offline Python sandbox root filesystem (no container registry needed).
#
#   sandbox-images/python/build-rootfs.sh [DIR]
#
# DIR (default $SANDFLEET_ROOTFS_DIR, else /var/cache/sandfleet/rootfs-python) receives a Debian
# bookworm minbase system with python3 and $python_packages (numpy, sympy, scipy, mpmath,
# matplotlib) from Debian's packages, the judge's compilers ($compilers: g++ and gcc, with
# bits/stdc++.h precompiled by precompile-headers.sh), the executor at /opt/sandfleet/executor.py
# and a manifest at /opt/sandfleet/manifest.json (Python, package and compiler versions). The same DIR is
#   - the `process` driver's bubblewrap root (its `rootfsDir` option), and
#   - the content of the docker image (build-image.sh imports it), so both drivers run the
#     identical Python environment.
# The debootstrap step (minutes) runs once: a DIR that holds a complete base is reused, and only
# the executor and the manifest are refreshed (seconds); a base built with another package list is
# built again. Delete DIR, or pass --rebuild, to start over. Needs root, debootstrap and a
# reachable Debian mirror (taken from apt's own sources unless SANDFLEET_DEBIAN_MIRROR is set).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
rebuild=0
if [[ "${1:-}" == "--rebuild" ]]; then rebuild=1; shift; fi
dir="${1:-${SANDFLEET_ROOTFS_DIR:-/var/cache/sandfleet/rootfs-python}}"
suite=bookworm
# The sandbox's Python packages, by distribution name: installed from Debian as python3-NAME and
# listed with their versions in the manifest. Add a package here (see README.md), then --rebuild.
python_packages="${SANDFLEET_PYTHON_PACKAGES:-numpy sympy scipy mpmath matplotlib}"
# The judge's compilers (the rows of packages/protocol/src/judge-languages.ts that compile): Debian
# packages, each listed in the manifest's `compilers` by the version its compiler reports.
compilers="${SANDFLEET_COMPILER_PACKAGES:-g++ gcc}"
packages="python3$(printf ',python3-%s' $python_packages)$(printf ',%s' $compilers)"
marker="$dir/.sandfleet-base-complete"

mirror() {
  if [[ -n "${SANDFLEET_DEBIAN_MIRROR:-}" ]]; then echo "$SANDFLEET_DEBIAN_MIRROR"; return; fi
  # The first plain Debian archive URI apt itself uses (deb822 or one-line format).
  local uri
  uri="$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list \
    | grep -v -- '-security' | grep -oE 'https?://[^ ]+' | head -n1 || true)"
  if [[ -z "$uri" ]]; then
    echo "build-rootfs: no Debian mirror found in apt's sources; set SANDFLEET_DEBIAN_MIRROR" >&2
    exit 1
  fi
  echo "$uri"
}

# The marker holds the package list the base was built with: another list builds it again.
if [[ $rebuild == 1 || ! -f "$marker" || "$(cat "$marker")" != "$packages" ]]; then
  command -v debootstrap >/dev/null || { echo "build-rootfs: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "build-rootfs: debootstrap $suite (minbase, $packages) into $dir"
  debootstrap --variant=minbase --include="$packages" "$suite" "$dir" "$(mirror)"
  # Nothing in the sandbox needs apt's caches, documentation or locales.
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* \
    "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/usr/share/info/*
  find "$dir"/usr/share/locale -mindepth 1 -maxdepth 1 ! -name 'C.*' -exec rm -rf {} + 2>/dev/null || true
  # Compile the standard library and the packages once, so a read-only root never needs to.
  chroot "$dir" /usr/bin/python3 -m compileall -q -j 0 /usr/lib/python3 /usr/lib/python3.11 >/dev/null 2>&1 || true
  # The judge's precompiled header, once per image (its g++, its flags).
  bash "$here/precompile-headers.sh" "$dir"
  echo "$packages" > "$marker"
fi

# The executor and its work dir (the driver mounts a tmpfs over /work; bubblewrap binds one).
install -d -m 0755 "$dir/opt/sandfleet"
# Docker copies the image's /work into the tmpfs it mounts there (mode included): world-writable, sticky.
install -d -m 1777 "$dir/work"
chmod 1777 "$dir/work"
if [[ -f "$here/executor.py" ]]; then
  install -m 0644 "$here/executor.py" "$dir/opt/sandfleet/executor.py"
else
  echo "build-rootfs: warning: $here/executor.py not found; the rootfs has no executor yet" >&2
fi

# The manifest: what the runner reports on /v1/info, read from the interpreter itself (manifest.py, which the process
# backend also runs in its sandboxes at start-up), with the judge's compilers' versions.
SANDFLEET_PYTHON_PACKAGES="$python_packages" chroot "$dir" /usr/bin/python3 -I - \
  image=sandfleet/python build=debootstrap executor=/opt/sandfleet/executor.py \
  < "$here/manifest.py" > "$dir/opt/sandfleet/manifest.json.tmp"
mv "$dir/opt/sandfleet/manifest.json.tmp" "$dir/opt/sandfleet/manifest.json"
echo "build-rootfs: ready: $dir"
cat "$dir/opt/sandfleet/manifest.json"
