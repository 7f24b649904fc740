"""The package as a user installs it: pip builds it offline with nothing downloaded, and a
missing httpx is an ImportError that says what to install."""
from __future__ import annotations

import pathlib
import subprocess
import sys
import zipfile

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
