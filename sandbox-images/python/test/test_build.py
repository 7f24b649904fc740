"""build.py: the programs on disk are the build of the package; the build refuses what would not run joined."""
import os
import subprocess
import sys

import pytest

import build

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_programs_on_disk_are_what_the_build_makes_of_the_package():
    for name in build.ENTRIES:
        with open(os.path.join(HERE, name), encoding='utf-8') as f:
            assert f.read() == build.build(name), '%s is stale: run python3 sandbox-images/python/build.py' % name
    check = subprocess.run([sys.executable, os.path.join(HERE, 'build.py'), '--check'], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_the_build_is_deterministic_and_compiles():
    for name in build.ENTRIES:
        text = build.build(name)
        assert text == build.build(name)
        compile(text, name, 'exec', dont_inherit=True)
        assert 'from .' not in text


def package(tmp_path, modules):
    root = tmp_path / 'root'
    (root / build.PACKAGE).mkdir(parents=True)
    for name, source in modules.items():
        (root / build.PACKAGE / (name + '.py')).write_text(source)
    return str(root)


@pytest.mark.parametrize(
    'modules, error',
    [
        ({'a': 'X = 1\n', 'b': 'X = 2\ndef main(): pass\n'}, 'X defined by both a and b'),
        ({'a': 'def open(): pass\n', 'b': 'def main(): pass\n'}, 'a name of the builtins'),
        ({'a': 'from .b import main\n', 'b': 'def main(): pass\n'}, 'does not come before it'),
        ({'a': 'Y = 1\n', 'b': 'from .a import Z\ndef main(): pass\n'}, 'does not define it'),
        ({'a': 'Y = 1\n', 'b': 'def main():\n    from .a import Y\n'}, 'below its top level'),
        ({'a': 'Y = 1\n', 'b': 'def run(): pass\n'}, 'has no main()'),
    ],
)
def test_the_build_refuses_what_would_not_run_joined(tmp_path, modules, error):
    root = package(tmp_path, modules)
    with pytest.raises(build.BuildError, match=error):
        build.build('p.py', {'p.py': tuple(modules)}, root)


def test_a_joined_program_runs_as_its_modules_do(tmp_path):
    root = package(
        tmp_path,
        {
            'a': '"""Module a."""\nimport os\nN = 2\n',
            'b': '"""The program."""\nimport os\nfrom .a import N\ndef main():\n    print(N * 21)\n',
        },
    )
    out = tmp_path / 'p.py'
    out.write_text(build.build('p.py', {'p.py': ('a', 'b')}, root))
    run = subprocess.run([sys.executable, str(out)], capture_output=True, text=True)
    assert (run.returncode, run.stdout) == (0, '42\n'), run.stderr
    assert '# Module a.' in out.read_text() and '"""The program.\n"""' in out.read_text()
