#!/usr/bin/env bash
# Precompiles the judge's headers once per sandbox image: bits/stdc++.h with exactly the judge's C++
# flags, written as bits/stdc++.h.gch beside the header, where g++ looks for a precompiled header
# before it reads the header itself (so `#include <bits/stdc++.h>` costs a fraction of a parse).
#
#   sandbox-images/python/precompile-headers.sh [ROOT]
#
# ROOT (default /): the root filesystem whose g++ compiles it and whose include dir receives it:
# a debootstrap root (build-rootfs.sh, through chroot), a Docker build's (the Dockerfile), or the
# host's own (.ci/run: the process backend binds the host's /usr into its sandboxes). Needs root
# for a root it does not own. A g++ other than the one that built the .gch (another version, other
# flags) ignores it and parses the header, so a stale file costs time, never a wrong binary.
#
# The flags are the cpp row's `compile.flags` in packages/protocol/src/judge-languages.ts
# (services/runner/test/judge/judge-image.test.ts holds them equal).
set -euo pipefail

root="${1:-/}"
flags=(-std=c++17 -O2 -DONLINE_JUDGE -pipe)

in_root() {
  if [[ "$root" == / ]]; then "$@"; else chroot "$root" "$@"; fi
}

if ! in_root sh -c 'command -v g++' >/dev/null 2>&1; then
  echo "precompile-headers: no g++ in $root; nothing to precompile" >&2
  exit 0
fi
# What g++ -H says it opens, `! FILE.gch` for a precompiled header it reads, `. FILE` for the header it includes.
opened() {
  echo '#include <bits/stdc++.h>' | in_root g++ "${flags[@]}" -x c++ -H -fsyntax-only - 2>&1 >/dev/null || true
}
# The first header it opens is the real bits/stdc++.h (or its .gch, from an earlier run: made again).
header="$(opened | sed -n -e 's/^\. \(.*bits\/stdc++\.h\)$/\1/p' -e 's/^! \(.*bits\/stdc++\.h\)\.gch$/\1/p')"
header="${header%%$'\n'*}"
if [[ -z "$header" ]]; then
  echo "precompile-headers: g++ in $root has no bits/stdc++.h" >&2
  exit 1
fi
if [[ "$(opened)" == *"! $header.gch"* ]]; then
  echo "precompile-headers: $header.gch is read already"
  exit 0
fi
echo "precompile-headers: $header.gch (g++ ${flags[*]})"
in_root g++ "${flags[@]}" -x c++-header "$header" -o "$header.gch.tmp"
mv "${root%/}$header.gch.tmp" "${root%/}$header.gch"
chmod 0644 "${root%/}$header.gch"
# g++ says `! PATH.gch` when it reads the precompiled header instead of the header.
if [[ "$(opened)" != *"! $header.gch"* ]]; then
  echo "precompile-headers: g++ does not read $header.gch" >&2
  exit 1
fi
