"""build.py: the programs on disk are the build of the package; the build refuses what would not run joined."""
import ast
import importlib.util
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
        (
            {'a': 'Y = 1\n', 'b': '"""P."""\ndef main():\n    return Y + Z\n'},
            'reads Z, which it neither defines nor imports',
        ),
        ({'a': 'def f():\n    return Q\n', 'b': '"""P."""\ndef main():\n    f()\n'}, 'reads Q, which it neither'),
        ({'a': 'Y = 1\nZ = Y\n', 'b': '"""P."""\ndef main(): pass\n'}, 'none of the names sandfleet_sandbox.a defines'),
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


def test_a_module_is_kept_when_its_names_are_reached_through_others(tmp_path):
    root = package(
        tmp_path,
        {
            'a': 'N = 2\n',
            'b': 'from .a import N\nclass K:\n    n = N\n',
            'c': '"""P."""\nfrom .b import K\ndef main():\n    K()\n',
        },
    )
    assert 'N = 2' in build.build('p.py', {'p.py': ('a', 'b', 'c')}, root)


def test_the_session_host_carries_no_judge():
    """The session host never judges: none of the judge's modules is in it, nor any name they define, and every name it
    reads it defines or imports (the build refuses it otherwise)."""
    judge_modules = [m for m in build.ENTRIES['executor.py'] if m.startswith('judge')]
    assert judge_modules == ['judge_frames', 'judge_job_process', 'judge_run']
    assert not set(judge_modules) & set(build.ENTRIES['session_host.py'])
    text = build.build('session_host.py')
    top = {n for n in build.defined(ast.parse(text))}
    for mod in judge_modules:
        with open(os.path.join(HERE, build.PACKAGE, mod + '.py'), encoding='utf-8') as f:
            theirs = build.defined(ast.parse(f.read()))
        assert not top & theirs, '%s in session_host.py' % ', '.join(sorted(top & theirs))
    assert build.unbound(text, 'session_host.py') == set()
    entries = dict(build.ENTRIES, **{'session_host.py': ('sandbox_env', 'libc', 'limits', 'frames', 'judge_frames')})
    entries['session_host.py'] += build.ENTRIES['session_host.py'][4:]
    with pytest.raises(build.BuildError, match='judge_frames defines is reached'):
        build.build('session_host.py', entries)


def test_the_session_host_runs_its_frames_without_the_judge():
    """The built session host, imported as a module (nothing run), has the frames it parses, and none of a judge's."""
    spec = importlib.util.spec_from_file_location('session_host_built', os.path.join(HERE, 'session_host.py'))
    host = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(host)
    assert callable(host.exec_job) and callable(host.cell_options) and callable(host.main)
    assert not hasattr(host, 'judge_job') and not hasattr(host, 'JudgeJob') and not hasattr(host, 'PARSERS')
