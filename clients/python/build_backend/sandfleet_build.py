"""The client's PEP 517 build backend: the standard library alone, so ``pip install`` builds the
package offline with nothing to download (no setuptools, no wheel; build isolation included).

The package is pure Python: a wheel is the ``sandfleet/`` folder plus its ``.dist-info``, with
the metadata written from ``pyproject.toml``'s ``[project]`` table; an editable install
(PEP 660) is a ``.pth`` file naming this folder; an sdist is the sources, this backend included.
"""
from __future__ import annotations

import base64
import hashlib
import io
import pathlib
import sys
import tarfile
import time
import tomllib
import zipfile
from typing import Any, Optional

import httpx_check

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = 'sandfleet'
#: What an sdist holds beside the package: enough to build the wheel again.
SDIST_FILES = ('pyproject.toml', 'README.md', 'build_backend/sandfleet_build.py', 'build_backend/httpx_check.py')
TAG = 'py3-none-any'


def _project() -> dict[str, Any]:
    return tomllib.loads((ROOT / 'pyproject.toml').read_text(encoding='utf-8'))['project']


def _name_version() -> str:
    project = _project()
    return f"{project['name']}-{project['version']}"


def _metadata() -> str:
    """Core metadata 2.1 from ``[project]``: the lines pip reads (dependencies, Python, extras)."""
    p = _project()
    lines = [
        'Metadata-Version: 2.1',
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p['description']}",
        f"License: {p['license']['text']}",
        f"Requires-Python: {p['requires-python']}",
    ]
    lines += [f'Requires-Dist: {d}' for d in p.get('dependencies', [])]
    for extra, deps in p.get('optional-dependencies', {}).items():
        lines.append(f'Provides-Extra: {extra}')
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    lines.append('Description-Content-Type: text/markdown')
    return '\n'.join(lines) + '\n\n' + (ROOT / p['readme']).read_text(encoding='utf-8')


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    return f'{path},sha256={digest},{len(data)}'


def _write_wheel(wheel_directory: str, files: dict[str, bytes]) -> str:
    """A wheel of ``files`` (path → bytes) plus the dist-info; returns its file name."""
    dist_info = f"{_name_version()}.dist-info"
    files = {
        **files,
        f'{dist_info}/METADATA': _metadata().encode(),
        f'{dist_info}/WHEEL': (
            f'Wheel-Version: 1.0\nGenerator: sandfleet_build\nRoot-Is-Purelib: true\nTag: {TAG}\n'
        ).encode(),
        f'{dist_info}/top_level.txt': f'{PACKAGE}\n'.encode(),
    }
    record = [_record_line(path, data) for path, data in files.items()] + [f'{dist_info}/RECORD,,']
    name = f'{_name_version()}-{TAG}.whl'
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / name, 'w', zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
        wheel.writestr(f'{dist_info}/RECORD', '\n'.join(record) + '\n')
    return name


def _package_files() -> dict[str, bytes]:
    return {
        p.relative_to(ROOT).as_posix(): p.read_bytes()
        for p in sorted((ROOT / PACKAGE).rglob('*'))
        if p.is_file() and '__pycache__' not in p.parts
    }


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> list[str]:
    """Nothing: the standard library builds the wheel."""
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> list[str]:
    """Nothing: the standard library builds the sdist."""
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> list[str]:
    """Nothing: the standard library builds the editable wheel."""
    return []


def _httpx_or_exit() -> None:
    """Exits 1 with what to install when pip is about to look for httpx where it cannot find it (httpx_check.py)."""
    try:
        httpx_check.check()
    except httpx_check.HttpxMissing as missing:
        print(missing, file=sys.stderr)
        raise SystemExit(1) from None


def build_wheel(
    wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None
) -> str:
    """PEP 517: the wheel of the package (first, when pip will look for httpx: is it there or can pip get it?)."""
    _httpx_or_exit()
    return _write_wheel(wheel_directory, _package_files())


def build_editable(
    wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None
) -> str:
    """PEP 660: a wheel whose ``.pth`` puts this folder on ``sys.path``, so edits take effect at once."""
    _httpx_or_exit()
    return _write_wheel(wheel_directory, {f'_{PACKAGE}_editable.pth': f'{ROOT}\n'.encode()})


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    """PEP 517: the sources (package, pyproject.toml, README, this backend) and PKG-INFO."""
    base = _name_version()
    name = f'{base}.tar.gz'
    members = {
        **{path: (ROOT / path).read_bytes() for path in SDIST_FILES},
        **_package_files(),
        'PKG-INFO': _metadata().encode(),
    }
    with tarfile.open(pathlib.Path(sdist_directory) / name, 'w:gz', format=tarfile.PAX_FORMAT) as sdist:
        for path, data in members.items():
            info = tarfile.TarInfo(f'{base}/{path}')
            info.size = len(data)
            info.mtime = int(time.time())
            info.mode = 0o644
            sdist.addfile(info, io.BytesIO(data))
    return name
