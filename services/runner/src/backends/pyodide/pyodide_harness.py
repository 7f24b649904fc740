# The Python side of the pyodide driver: run once at warm-up (before the baseline memory image is
# taken), it defines _sf_run(), which runs one job read from /tmp/.sf/in.json in a fresh
# __main__ and writes its outcome to /tmp/.sf/out.json. stdout and stderr are file descriptors
# 1 and 2, captured and capped by the JavaScript side (pyodide-job.js). Every job starts from the
# same memory image, so nothing here needs undoing.
import io
import json
import linecache
import os
import random
import signal
import sys
import time
import traceback
import types

# warm, shared by most jobs
import codecs  # noqa: F401
import collections  # noqa: F401
import functools  # noqa: F401
import itertools  # noqa: F401
import math  # noqa: F401
import re  # noqa: F401
import string  # noqa: F401

_SF_IN = '/tmp/.sf/in.json'
_SF_OUT = '/tmp/.sf/out.json'
_SF_WORK = '/tmp/work'


def _sf_read(path, _open=os.open, _read=os.read, _close=os.close, _join=b''.join):
    """A whole file through the os layer: open() and its buffered reader cost more, every job."""
    fd = _open(path, os.O_RDONLY)
    try:
        chunks = []
        while True:
            chunk = _read(fd, 1 << 20)
            if not chunk:
                return _join(chunks)
            chunks.append(chunk)
    finally:
        _close(fd)


def _sf_write(
    path,
    data,
    _open=os.open,
    _write=os.write,
    _close=os.close,
    _memoryview=memoryview,
    _flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
):
    """`data` (bytes) as the whole file at `path`, through the os layer."""
    fd = _open(path, _flags, 0o600)
    try:
        view = _memoryview(data)
        while view:
            view = view[_write(fd, view) :]
    finally:
        _close(fd)


# Everything the harness calls after the user's code is bound here, so a job that patches
# builtins or modules (json.dumps = None) breaks only itself; a harness that fails anyway makes
# the driver retire the sandbox.
def _sf_run(
    _write=_sf_write,
    _str=str,
    _type=type,
    _isinstance=isinstance,
    _int=int,
    _print=print,
    _BaseException=BaseException,
    _SystemExit=SystemExit,
    _MemoryError=MemoryError,
    _dumps=json.dumps,
    _format=traceback.format_exception,
    _sys=sys,
    _chdir=os.chdir,
):
    job = json.loads(_sf_read(_SF_IN))
    code = job['code']
    random.seed(os.urandom(32))
    out = io.TextIOWrapper(io.FileIO(1, 'w', closefd=False), encoding='utf-8', errors='backslashreplace')
    err = io.TextIOWrapper(
        io.FileIO(2, 'w', closefd=False), encoding='utf-8', errors='backslashreplace', line_buffering=True
    )
    sys.stdout = sys.__stdout__ = out
    sys.stderr = sys.__stderr__ = err
    sys.stdin = sys.__stdin__ = io.StringIO(job['stdin'])
    main = types.ModuleType('__main__')
    sys.modules['__main__'] = main
    sys.argv = ['-c']
    linecache.cache['<string>'] = (len(code), None, code.splitlines(True), '<string>')
    _chdir(_SF_WORK)
    status, exit_code, error = 'ok', 0, None
    try:
        exec(compile(code, '<string>', 'exec'), main.__dict__)
    except _SystemExit as e:
        c = e.code
        if c is None:
            exit_code = 0
        elif _isinstance(c, _int):
            exit_code = c & 0xFF
        else:
            _print(c, file=err)
            exit_code = 1
        if exit_code:
            status, error = 'error', {'type': 'SystemExit', 'message': _str(c)}
    except _BaseException as e:
        if _isinstance(e, _MemoryError):
            main.__dict__.clear()
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != '<string>':
            tb = tb.tb_next
        depth, t = 0, tb
        while t is not None and depth <= 100:
            depth, t = depth + 1, t.tb_next
        # Formatting a frame is slow in wasm: a deep RecursionError keeps its last 100 frames.
        text = ''.join(_format(_type(e), e, tb, limit=-100 if depth > 100 else None))
        try:
            err.write(text)
        except _BaseException:
            pass
        status, exit_code = ('memory' if _isinstance(e, _MemoryError) else 'error'), 1
        error = {'type': _type(e).__name__, 'message': _str(e)[:8192], 'traceback': text[-8192:]}
    for s in (out, err):
        try:
            s.flush()
        except _BaseException:
            pass
    _write(_SF_OUT, _dumps({'status': status, 'exit_code': exit_code, 'error': error}).encode())


def _sf_sleep(secs, _monotonic=time.monotonic, _ValueError=ValueError):
    """time.sleep as a loop in Python: stopped by the timeout's interrupt, and it does not call
    into JavaScript (Pyodide's own sleep does, which would retire the sandbox)."""
    if secs < 0:
        raise _ValueError('sleep length must be non-negative')
    end = _monotonic() + secs
    while _monotonic() < end:
        pass


def _sf_sigterm(signum, frame):
    """The soft stop: at the deadline the host raises SIGTERM through the interrupt buffer. A job may
    install its own handler (it runs instead, and may print and exit); this one stops the code."""
    raise KeyboardInterrupt


time.sleep = _sf_sleep
signal.signal(signal.SIGTERM, _sf_sigterm)
os.makedirs('/tmp/.sf', exist_ok=True)
os.makedirs(_SF_WORK, exist_ok=True)
os.makedirs('/mnt', exist_ok=True)
