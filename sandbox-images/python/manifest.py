"""What a Python sandbox runs, read from its interpreter: the Python version, the base system, the distributions it
can import and the judge's compilers it holds, printed as one JSON object (the protocol's SandboxManifest, less what
only the caller knows).

    python3 -I manifest.py                 # every distribution on the interpreter's path
    SANDFLEET_PYTHON_PACKAGES="numpy sympy" python3 -I manifest.py   # only those (the ones installed)
    python3 -I manifest.py image=sandfleet/python build=debootstrap  # fields added as given

The runner's process and unsafe backends run it at start-up in a sandbox of their own kind (GET /v1/info);
build-rootfs.sh runs it in the root it built (the image's /opt/sandfleet/manifest.json). Standard library only.
"""
import importlib
import importlib.metadata as md
import json
import os
import platform
import shutil
import subprocess
import sys

# The judge's compilers (the compiled rows of packages/protocol/src/judge-languages.ts), listed when on the PATH.
COMPILERS = ('g++', 'gcc')


def version_of(dist, name):
    """A distribution's version; Debian's mpmath ships metadata without one, so the module's `__version__` then."""
    version = dist.version or ''
    if version in ('', '0.0.0'):
        try:
            version = str(getattr(importlib.import_module(name), '__version__', version))
        except Exception:
            pass
    return version


def packages(wanted):
    """Distribution name -> version: those of `wanted` that are installed, or every one when `wanted` is empty."""
    out = {}
    for dist in md.distributions():
        name = dist.metadata['Name'] if dist.metadata is not None else None
        if not name or name in out:  # the first on the path is the one an import finds
            continue
        if wanted and name.lower() not in wanted:
            continue
        out[name] = version_of(dist, name)
    return dict(sorted(out.items(), key=lambda kv: kv[0].lower()))


def os_name():
    """PRETTY_NAME of os-release (/etc's, else /usr/lib's, which a sandbox binding only /usr still sees)."""
    for path in ('/etc/os-release', '/usr/lib/os-release'):
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.strip().partition('=')
                    if key == 'PRETTY_NAME':
                        return value.strip('"')
        except OSError:
            continue
    return platform.system() or 'unknown'


def compilers():
    """Compiler -> the version it reports (`-dumpfullversion`), for each of COMPILERS found."""
    out = {}
    for cc in COMPILERS:
        path = shutil.which(cc)
        if path is None:
            continue
        try:
            done = subprocess.run([path, '-dumpfullversion'], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0 and done.stdout.strip():
            out[cc] = done.stdout.strip()
    return out


def main():
    wanted = {n.lower() for n in os.environ.get('SANDFLEET_PYTHON_PACKAGES', '').split()}
    manifest = dict(arg.split('=', 1) for arg in sys.argv[1:] if '=' in arg)
    manifest.update(os=os_name(), python=platform.python_version(), packages=packages(wanted), compilers=compilers())
    print(json.dumps(dict(sorted(manifest.items())), indent=2))


if __name__ == '__main__':
    main()
