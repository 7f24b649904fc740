"""Before pip resolves the client's one dependency: is httpx there, or somewhere pip can get it from?

Where httpx is missing and no package index pip would use answers, pip would spend its retries on the index (about 8 s
for each of httpx's seven packages) and then fail, or find httpx in a local source only after them. The build fails at
once instead, with what to install and how for each kind of Python (:data:`HOWTO`), and the command that installs from
a local source that holds httpx when there is one. Quiet when an index answers, or when pip has only local sources and
one holds httpx.

Checked only when pip installs or builds with dependencies (its command line, read from /proc, says so: not with
``--no-deps``, nor under another frontend); ``SANDFLEET_SKIP_HTTPX_CHECK=1`` skips it. Standard library only.
"""
from __future__ import annotations

import os
import pathlib
import re
import shlex
import socket
import subprocess
import sys
import urllib.parse
from typing import Optional

REQUIRED = (0, 23)
DEFAULT_INDEX = 'https://pypi.org/simple'

HOWTO = """\
sandfleet (the Python client) needs httpx >= 0.23; {python} has none, and no package index pip would use answers:
{why}
Install httpx for this Python first, then the client, with one of:
  - Debian or Ubuntu's python3: apt-get install python3-httpx; in a virtualenv of it, with its packages:
    /usr/bin/python3 -m venv --system-site-packages .venv; .venv/bin/pip install ./clients/python
    (/usr/bin/python3, not `python3`, where pyenv or conda puts its own Python first on the PATH)
  - a directory of wheels (httpx, httpcore, h11, anyio, sniffio, idna, certifi; on a machine with
    network: pip download httpx -d wheels), for any Python (pyenv, conda, a venv):
    pip install --no-index --find-links wheels ./clients/python
  - a local mirror of the index: pip install --index-url file:///path/to/simple ./clients/python
  - conda: conda install httpx (from a local channel offline: conda install --offline -c file:///path/to/channel httpx)
  - no install at all: PYTHONPATH=clients/python, with httpx importable by that Python
The client builds with the standard library alone: no build isolation, setuptools or wheel to fetch
(--no-build-isolation changes nothing). To let pip try the index anyway: SANDFLEET_SKIP_HTTPX_CHECK=1."""


class HttpxMissing(RuntimeError):
    """httpx is not installed and no source pip would use can give it."""


def installed_version(python: str) -> Optional[tuple[int, ...]]:
    """httpx's version in `python`'s own environment (not the build's: pip's build isolation hides site-packages from
    the backend, and -E drops the PYTHONPATH that does it), None when it has none."""
    code = 'import importlib.metadata as m\ntry: print(m.version("httpx"))\nexcept m.PackageNotFoundError: pass'
    try:
        out = subprocess.run([python, '-E', '-c', code], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    parts = re.findall(r'\d+', out)[:3]
    return tuple(int(p) for p in parts) if parts else None


def debian_python_with_httpx(system: str = '/usr/bin/python3') -> Optional[str]:
    """The system's python3 when it has httpx (Debian's python3-httpx): a virtualenv of it with its packages is the
    quickest way out, for a user of another Python (pyenv, conda) or of a venv made without them. None otherwise."""
    if not os.path.exists(system):
        return None
    version = installed_version(system)
    return system if version is not None and version >= REQUIRED else None


def pip_command_line(pid: int) -> Optional[list[str]]:
    """The arguments of pip's `install`, `wheel` or `download` command run by process `pid`, None when it runs none."""
    try:
        argv = pathlib.Path(f'/proc/{pid}/cmdline').read_bytes().decode(errors='replace').split('\0')
    except OSError:
        return None
    if not any('pip' in a for a in argv[:3]):
        return None
    for i, arg in enumerate(argv):
        if arg in ('install', 'wheel', 'download'):
            return argv[i + 1 :]
    return None


def option_values(args: list[str], *names: str) -> list[str]:
    """The values of `names` (`-i`, `--index-url`, …) in `args`: `--name VALUE`, `--name=VALUE`, `-iVALUE`."""
    values = []
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                values.append(args[i + 1])
            elif name.startswith('--') and arg.startswith(name + '='):
                values.append(arg[len(name) + 1 :])
            elif not name.startswith('--') and arg.startswith(name) and len(arg) > len(name):
                values.append(arg[len(name) :])
    return values


def pip_config(python: str) -> dict[str, str]:
    """pip's configuration files as `pip config list` gives them (`global.index-url` → value)."""
    try:
        out = subprocess.run(
            [python, '-E', '-m', 'pip', 'config', 'list'], capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    config = {}
    for line in out.splitlines():
        key, _, value = line.partition('=')
        if key and not key.startswith(':env:'):  # the environment is read below, as pip reads it
            config[key.split('.', 1)[-1]] = value.strip().strip('\'"')
    return config


def sources(args: list[str], env: dict[str, str], config: dict[str, str]) -> tuple[list[str], list[str]]:
    """The indexes and the find-links pip would use: its options first, then its environment, then its files."""

    def setting(options: tuple[str, ...], variable: str, key: str) -> list[str]:
        given = option_values(args, *options)
        if given:
            return given
        if env.get(variable):
            return env[variable].split()
        return config.get(key, '').split()

    no_index = '--no-index' in args or env.get('PIP_NO_INDEX', '').lower() in ('1', 'true', 'yes', 'on')
    no_index = no_index or config.get('no-index', '').lower() in ('1', 'true', 'yes', 'on')
    indexes = [] if no_index else (setting(('-i', '--index-url'), 'PIP_INDEX_URL', 'index-url') or [DEFAULT_INDEX])
    if not no_index:
        indexes += setting(('--extra-index-url',), 'PIP_EXTRA_INDEX_URL', 'extra-index-url')
    links = setting(('-f', '--find-links'), 'PIP_FIND_LINKS', 'find-links')
    return indexes, links


def local_has_httpx(source: str, cwd: pathlib.Path) -> bool:
    """A local find-links directory with an httpx archive, or a file:// simple index with an httpx page (a relative
    path is pip's, from `cwd`)."""
    path = urllib.parse.urlparse(source).path if source.startswith('file:') else source
    if '://' in path:
        return False
    place = cwd / path
    if (place / 'httpx').is_dir():  # a simple index
        return True
    try:
        return any(p.name.lower().startswith('httpx-') for p in place.iterdir())
    except OSError:
        return False


def reachable(url: str, env: dict[str, str], timeout_s: float = 3.0) -> Optional[str]:
    """None when a TCP connection to `url`'s host (or the proxy pip would use) opens, else why not."""
    parsed = urllib.parse.urlparse(url)
    proxy = env.get(f'{parsed.scheme}_proxy') or env.get(f'{parsed.scheme.upper()}_PROXY')
    target = urllib.parse.urlparse(proxy) if proxy else parsed
    host = target.hostname or ''
    port = target.port or (443 if target.scheme == 'https' else 80)
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
        return None
    except OSError as e:
        return f'{url}: not reachable ({e.strerror or e})'


def check(python: str = sys.executable, env: Optional[dict[str, str]] = None, pid: Optional[int] = None) -> None:
    """Raises :class:`HttpxMissing` with :data:`HOWTO` when pip is about to look for httpx where it cannot be found."""
    env = dict(os.environ) if env is None else env
    if env.get('SANDFLEET_SKIP_HTTPX_CHECK', '') not in ('', '0'):
        return
    pid = os.getppid() if pid is None else pid
    args = pip_command_line(pid)
    if args is None or '--no-deps' in args:
        return
    version = installed_version(python)
    if version is not None and version >= REQUIRED:
        return
    indexes, links = sources(args, env, pip_config(python))
    remote = [s for s in indexes + links if re.match(r'^https?://', s)]
    refusals = [reachable(url, env) for url in remote]
    if any(r is None for r in refusals):
        return  # pip gets httpx from the index that answers
    try:
        cwd = pathlib.Path(os.readlink(f'/proc/{pid}/cwd'))
    except OSError:
        cwd = pathlib.Path.cwd()
    local = [s for s in indexes + links if s not in remote]
    holding = [s for s in local if local_has_httpx(s, cwd)]
    if holding and not remote:
        return  # only local sources, one of them with httpx: quick
    why = [r for r in refusals if r is not None]
    if holding:
        why.append(
            f'{holding[0]} has httpx, but pip would first retry the index above for httpx and each of its'
            ' dependencies (about 8 s each); from that source alone it takes seconds:\n    '
            + (
                f'pip install --index-url {holding[0]} ./clients/python'
                if holding[0] in indexes
                else f'pip install --no-index --find-links {holding[0]} ./clients/python'
            )
        )
    why += [f'{s}: no httpx there' for s in local if s not in holding]
    system = debian_python_with_httpx()
    if system is not None:
        why.append(
            f'{system} has httpx: a virtualenv of it needs nothing more: '
            f'{system} -m venv --system-site-packages .venv; .venv/bin/pip install ./clients/python'
        )
    if not why:
        why = ['pip was given no index (--no-index) and no --find-links']
    raise HttpxMissing(HOWTO.format(python=shlex.quote(python), why='\n'.join(f'  - {w}' for w in why)))
