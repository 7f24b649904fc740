"""The judge's kinds of job, inside the job process (registered in job_process.KINDS): a program run by exec (the
compiler, named by its argv; or a compiled binary, from a sealed memfd no process can write), a function of the code
called with JSON arguments (its return value reported as JSON), and a script given arguments (a Python checker's INPUT
OUTPUT ANSWER). The controller's end of a judge is judge_run.py.

Like the rest of the job process, it imports nothing once the zygotes have forked: what it uses is imported here.
"""
import _signal
import fcntl
import json
import os
import signal
import sys

from .job_process import KINDS, MAIN_FILE, run_job, take_input

# memfd_create's flags and the seals of a binary's copy: nothing may write, grow or shrink it, or change its seals.
MFD_CLOEXEC = 1
MFD_ALLOW_SEALING = 2
F_ADD_SEALS = 1033
SEALED = 1 | 2 | 4 | 8  # F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE
# The signals the interpreter ignores and an exec'd program would inherit ignored: it gets their defaults, as a program
# a shell starts does (a write to a closed pipe, a file past its size limit, end it).
DEFAULT_SIGNALS = (int(signal.SIGPIPE), int(signal.SIGXFSZ))
# The longest return value of a call, as JSON: a longer one is not compared (the test fails).
RETURN_LIMIT = 1 << 18
# The call test's harness, run in the job's __main__ after its code: the call, its value kept there.
HARNESS = compile('__sandfleet_return__ = __sandfleet_call__()', '<judge>', 'exec')
_json_loads = json.loads
_json_dumps = json.dumps
# The judge's kinds, by the names its steps give them (judge_frames.JudgeStep.kind; judge_run.py makes them).
EXEC = 'exec'
CALL = 'call'
ARGV = 'argv'


def run_exec(code, compiled, stdin, files, spec, watch):
    """Execs the program of `spec`, (argv, binary): argv[0] looked up on PATH when `binary` is None, else `binary` run
    from a sealed memfd, argv[0] only its name. Returns (127, report) only when the exec failed; a program that runs
    ends this process with its own status. The report pipe (fd 3) closes at the exec: the program cannot write the
    report."""
    argv, binary = spec
    failure = take_input(stdin, files)
    if failure is not None:
        return 1, failure
    try:
        for sig in DEFAULT_SIGNALS:
            _signal.signal(sig, _signal.SIG_DFL)
        _signal.signal(int(signal.SIGTERM), _signal.SIG_DFL)
        os.set_inheritable(3, False)
        if binary is None:
            os.execvp(argv[0], argv)
        fd = os.memfd_create('main', MFD_CLOEXEC | MFD_ALLOW_SEALING)
        view = memoryview(binary)
        while view:
            view = view[os.write(fd, view) :]
        fcntl.fcntl(fd, F_ADD_SEALS, SEALED)
        os.execve(fd, argv, os.environ)
    except OSError as e:
        return 127, {'type': 'ExecFailed', 'message': '%s: %s' % (argv[0], e.strerror or e)}
    return 127, {'type': 'ExecFailed', 'message': argv[0]}


def caller(name, args):
    """The call of a call test: the function `name` of the job's __main__ (or, LeetCode's way, the method of a fresh
    `Solution()`), given `args`."""

    def call():
        main = sys.modules['__main__'].__dict__
        fn = main.get(name)
        if fn is None:
            cls = main.get('Solution')
            if cls is None:
                raise NameError('name %r is not defined' % name)
            fn = getattr(cls(), name)
        return fn(*args)

    return call


def run_call(code, compiled, stdin, files, spec, watch):
    """Runs the code, then calls its function with the arguments of `spec`, (name, arguments as JSON text); the report
    carries the return value as JSON (`returned`), or why it has none (`returned_error`: no JSON value, or too
    long)."""
    name, args = spec
    status, report = run_job(code, compiled, stdin, files, watch)
    if status:
        return status, report
    main = sys.modules['__main__'].__dict__
    main['__sandfleet_call__'] = caller(name, _json_loads(args))
    status, report = run_job(code, HARNESS, b'', {}, watch)
    value = main.pop('__sandfleet_return__', None)
    main.pop('__sandfleet_call__', None)
    if status:
        return status, report
    try:
        text = _json_dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        return 0, {'returned_error': 'not a JSON value: %s (%s)' % (repr(value)[:1000], e)}
    if len(text) > RETURN_LIMIT:
        return 0, {'returned_error': 'a value of %d bytes of JSON, over %d' % (len(text), RETURN_LIMIT)}
    return 0, {'returned': text}


def run_argv(code, compiled, stdin, files, spec, watch):
    """Runs the code as `python3 main.py ARGS` would: `sys.argv` its path and the arguments `spec` (a tuple)."""
    sys.argv = [MAIN_FILE, *spec]
    return run_job(code, compiled, stdin, files, watch)


KINDS.update({EXEC: run_exec, CALL: run_call, ARGV: run_argv})
