#!/usr/bin/env bash
# The fleet image's one name, which the chart (helm/sandfleet: image.repository and its
# appVersion), build-fleet-image.sh, fleet.sh, compose.yaml and deploy/Dockerfile's instructions
# all use: sandfleet/sandfleet:VERSION, VERSION the repository's package.json version (the chart's
# appVersion is the same; test/deploy-names.test.ts holds them together). SANDFLEET_FLEET_IMAGE
# names another.
#
#   deploy/fleet-image.sh     # prints it
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="$(sed -n 's/^  "version": "\([^"]*\)",$/\1/p' "$root/package.json" | head -n1)"
[[ -n "$version" ]] || { echo "fleet-image: no version in $root/package.json" >&2; exit 1; }
echo "${SANDFLEET_FLEET_IMAGE:-sandfleet/sandfleet:$version}"
