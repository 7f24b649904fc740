"""The package as a user installs it: pip builds it offline with nothing downloaded; a missing
httpx is an ImportError that says what to install, and a pip install that could not get httpx
fails at once saying the same."""
from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys
import zipfile

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1]


def test_pip_builds_the_wheel_with_no_index(tmp_path: pathlib.Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            '-m',
            'pip',
            'wheel',
            '--no-index',
            '--no-deps',
            '--no-cache-dir',
            '-w',
            str(tmp_path),
            str(PACKAGE),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    [wheel] = tmp_path.glob('sandfleet-*-py3-none-any.whl')
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = z.read(next(n for n in names if n.endswith('.dist-info/METADATA'))).decode()
    assert {'sandfleet/__init__.py', 'sandfleet/aio.py', 'sandfleet/py.typed'} <= names
    assert 'Requires-Dist: httpx>=0.23' in metadata.splitlines()
    # The wheel imports: a zip on sys.path is enough for a pure-Python package.
    check = subprocess.run(
        [sys.executable, '-c', 'import sandfleet; print(sandfleet.__file__)'],
        capture_output=True,
        text=True,
        env={'PYTHONPATH': str(wheel)},
        cwd=tmp_path,
        timeout=60,
    )
    assert check.returncode == 0 and str(wheel) in check.stdout, check.stderr


def test_a_missing_httpx_says_what_to_install() -> None:
    # None in sys.modules makes `import httpx` fail as it does where httpx is not installed.
    code = (
        "import sys; sys.modules['httpx'] = None\n"
        "try:\n    import sandfleet\nexcept ImportError as e:\n    print(type(e).__name__, e.name, e)"
    )
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=PACKAGE, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith('ImportError httpx '), run.stdout
    assert 'apt-get install python3-httpx' in run.stdout and 'pip install httpx' in run.stdout


# A Python without httpx, as a new user has one: pyenv's (the machine's, when it has one), and a
# virtualenv of Debian's python3 without its system packages. Where no index answers (here: a
# closed port on 127.0.0.1, whatever the machine's network), pip fails at once, in the build
# backend (httpx_check.py), saying what to install, and never tries the index.
PYENVS = sorted(pathlib.Path('/root/.pyenv/versions').glob('3.1[1-9]*/bin/python'))


def _has_httpx(python: str) -> bool:
    return subprocess.run([python, '-c', 'import httpx'], capture_output=True, timeout=60).returncode == 0


PYENV = next((str(p) for p in PYENVS if not _has_httpx(str(p))), None)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _pip_env(home: pathlib.Path) -> dict[str, str]:
    """pip with no configuration of the machine's, an index that does not answer, and no cache."""
    return {
        'PATH': os.environ.get('PATH', '/usr/bin:/bin'),
        'HOME': str(home),
        'PIP_CONFIG_FILE': os.devnull,
        'PIP_INDEX_URL': f'http://127.0.0.1:{_closed_port()}/simple',
        'PIP_NO_CACHE_DIR': '1',
        'PIP_DISABLE_PIP_VERSION_CHECK': '1',
    }


def _venv(where: pathlib.Path, system_site: bool) -> str:
    """A virtualenv of Debian's python3 with no pip of its own (Debian's drives it: `pip --python`)."""
    flags = ['--system-site-packages'] if system_site else []
    subprocess.run(['/usr/bin/python3', '-m', 'venv', '--without-pip', *flags, str(where)], check=True, timeout=240)
    return str(where / 'bin' / 'python')


def _pip(python: str) -> list[str]:
    """pip for `python`: its own, or Debian's driving a virtualenv that has none."""
    if subprocess.run([python, '-m', 'pip', '--version'], capture_output=True, timeout=60).returncode == 0:
        return [python, '-m', 'pip']
    return ['/usr/bin/python3', '-m', 'pip', '--python', python]


@pytest.fixture(scope='module')
def debian_venv(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A virtualenv of Debian's python3 without the system's packages (so without python3-httpx)."""
    return _venv(tmp_path_factory.mktemp('bare') / 'venv', system_site=False)


@pytest.fixture(params=['pyenv', 'debian-venv'] if PYENV is not None else ['debian-venv'])
def bare_python(request: pytest.FixtureRequest) -> str:
    """A Python whose environment has no httpx."""
    python = PYENV if request.param == 'pyenv' else request.getfixturevalue('debian_venv')
    assert python is not None and not _has_httpx(python)
    return python


def _pip_install(python: str, home: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*_pip(python), 'install', '--target', str(home / 'target'), *args, str(PACKAGE)],
        capture_output=True,
        text=True,
        env=_pip_env(home),
        cwd=home,
        timeout=300,
    )


def _stub_httpx_wheels(where: pathlib.Path) -> pathlib.Path:
    """A wheel directory with an httpx of no dependencies (what `pip download httpx -d DIR` gives, made small)."""
    where.mkdir()
    files = {
        'httpx/__init__.py': b'__version__ = "0.99.0"\n',
        'httpx-0.99.0.dist-info/METADATA': b'Metadata-Version: 2.1\nName: httpx\nVersion: 0.99.0\n',
        'httpx-0.99.0.dist-info/WHEEL': b'Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
    }
    with zipfile.ZipFile(where / 'httpx-0.99.0-py3-none-any.whl', 'w') as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr(
            'httpx-0.99.0.dist-info/RECORD', ''.join(f'{n},,\n' for n in files) + 'httpx-0.99.0.dist-info/RECORD,,\n'
        )
    return where


def test_without_httpx_and_no_index_pip_fails_at_once_saying_what_to_install(
    bare_python: str, tmp_path: pathlib.Path
) -> None:
    run = _pip_install(bare_python, tmp_path)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert 'needs httpx >= 0.23' in out and 'not reachable' in out, out
    assert 'apt-get install python3-httpx' in out and 'pip install --no-index --find-links wheels' in out, out
    if _has_httpx('/usr/bin/python3'):  # the quickest way out is named
        assert '/usr/bin/python3 has httpx: a virtualenv of it needs nothing more' in out, out
    assert 'Retrying' not in out, 'pip never tried the index: ' + out


def test_a_wheel_directory_with_httpx_is_named_and_installs_from(bare_python: str, tmp_path: pathlib.Path) -> None:
    wheels = _stub_httpx_wheels(tmp_path / 'wheels')
    # With the index too, pip would retry it before using the directory: the command that does not is named.
    run = _pip_install(bare_python, tmp_path, '--find-links', 'wheels')
    out = run.stdout + run.stderr
    assert run.returncode != 0 and 'pip install --no-index --find-links wheels ./clients/python' in out, out
    assert 'Retrying' not in out, out
    # That command installs, the backend quiet.
    run = _pip_install(bare_python, tmp_path, '--no-index', '--find-links', str(wheels))
    assert run.returncode == 0, run.stdout + run.stderr
    assert {'sandfleet', 'httpx'} <= {p.name for p in (tmp_path / 'target').iterdir()}


def test_debian_python3_with_python3_httpx_installs_without_the_index(tmp_path: pathlib.Path) -> None:
    python = _venv(tmp_path / 'venv', system_site=True)
    assert _has_httpx(python), "Debian's python3-httpx is seen by a venv with the system's packages"
    run = subprocess.run(
        [*_pip(python), 'install', str(PACKAGE)],
        capture_output=True,
        text=True,
        env=_pip_env(tmp_path),
        cwd=tmp_path,
        timeout=300,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0 and 'Retrying' not in out, out
