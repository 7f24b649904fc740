#!/usr/bin/env python3
"""sandfleet executor (first version): NDJSON frames on stdin/stdout, one forked child per job.

See docs/executor-protocol.md. Standard library only; CPython 3.11 and 3.12.
The channel is a private dup of fd 1; fds 0/1/2 point at /dev/null, so nothing a job writes
reaches the channel. Each job runs in a child forked from this warm process, in its own session,
with rlimits, a fresh working directory and fd-level stdout/stderr pipes drained with caps.
"""
import base64, json, os, resource, select, shutil, signal, sys, time, traceback

WORKDIR = os.environ.get('SANDFLEET_WORKDIR', '/tmp/sandfleet-work-%d' % os.getpid())
REPORT_FD = 3


def child(job, out_w, err_w, rep_w):
    os.setsid()
    os.dup2(out_w, 1); os.dup2(err_w, 2); os.dup2(rep_w, REPORT_FD, inheritable=False)
    os.closerange(REPORT_FD + 1, 65536)
    stdin = job.get('stdin') or ''
    if stdin:
        fd = os.memfd_create('stdin', 0); os.write(fd, stdin.encode()); os.lseek(fd, 0, 0); os.dup2(fd, 0); os.close(fd)
    os.mkdir(WORKDIR, 0o700); os.chdir(WORKDIR)
    for rel, b64 in (job.get('files') or {}).items():
        path = os.path.normpath(rel)
        if path.startswith(('/', '..')):
            raise ValueError('files: %r escapes the working directory' % rel)
        if os.path.dirname(path): os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as f: f.write(base64.b64decode(b64))
    vm = int(open('/proc/self/statm').read().split()[0]) * os.sysconf('SC_PAGE_SIZE')
    mem = vm + int(job.get('memory_mb', 1024)) * 1048576
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    cpu = int(job.get('timeout_ms', 10000)) // 1000 + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    import io, types, linecache
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, 'w', closefd=False), encoding='utf-8')
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.FileIO(2, 'w', closefd=False), encoding='utf-8', errors='backslashreplace', line_buffering=True)
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, 'r', closefd=False), encoding='utf-8')
    code = job.get('code', '')
    main = types.ModuleType('__main__'); sys.modules['__main__'] = main; sys.argv = ['-c']
    linecache.cache['<string>'] = (len(code), None, code.splitlines(True), '<string>')
    status, report = 0, None
    try:
        exec(compile(code, '<string>', 'exec'), main.__dict__)
    except SystemExit as e:
        c = e.code
        if c is None: status = 0
        elif isinstance(c, int): status = c & 0xff
        else: print(c, file=sys.stderr); status = 1
        if status: report = {'type': 'SystemExit', 'message': str(c)}
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__: tb = tb.tb_next
        text = ''.join(traceback.format_exception(type(e), e, tb))
        try: sys.stderr.write(text)
        except Exception: pass
        report = {'type': type(e).__name__, 'message': str(e)[:8192], 'traceback': text[-8192:], 'memory': isinstance(e, MemoryError)}
        status = 1
    for s in (sys.stdout, sys.stderr):
        try: s.flush()
        except Exception: pass
    if report: os.write(REPORT_FD, json.dumps(report).encode())
    os._exit(status)


def run(job):
    cap = int(job.get('max_output_bytes') or 65536)
    out_r, out_w = os.pipe(); err_r, err_w = os.pipe(); rep_r, rep_w = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try: child(job, out_w, err_w, rep_w)
        except BaseException as e:
            try: os.write(REPORT_FD, json.dumps({'type': type(e).__name__, 'message': str(e)}).encode())
            except Exception: pass
        os._exit(1)
    for fd in (out_w, err_w, rep_w): os.close(fd)
    pidfd = os.pidfd_open(pid)
    bufs = {out_r: bytearray(), err_r: bytearray(), rep_r: bytearray()}
    trunc = {out_r: False, err_r: False, rep_r: False}
    poller = select.poll()
    for fd in (out_r, err_r, rep_r, pidfd): poller.register(fd, select.POLLIN)
    deadline = t0 + int(job.get('timeout_ms', 10000)) / 1000
    timed_out = exited = False

    def drain(fd):
        try: data = os.read(fd, 65536)
        except BlockingIOError: return True
        if not data:
            try: poller.unregister(fd)
            except KeyError: pass
            return False
        room = cap - len(bufs[fd])
        if len(data) > room: trunc[fd] = True; data = data[:max(room, 0)]
        bufs[fd] += data
        return True
    while not exited:
        left = deadline - time.perf_counter()
        if left <= 0 and not timed_out:
            timed_out = True
            try: os.killpg(pid, signal.SIGKILL)
            except OSError: pass
        for fd, _ in poller.poll(max(left, 0) * 1000 if not timed_out else 1000):
            if fd == pidfd: exited = True
            else: drain(fd)
    duration = (time.perf_counter() - t0) * 1000
    try: os.killpg(pid, signal.SIGKILL)
    except OSError: pass
    _, wstatus = os.waitpid(pid, 0)
    os.close(pidfd)
    for fd in (out_r, err_r, rep_r):
        os.set_blocking(fd, False)
        while drain(fd):
            try:
                if not select.select([fd], [], [], 0.05)[0]: break
            except (OSError, ValueError): break
        os.close(fd)
    try: report = json.loads(bytes(bufs[rep_r]) or b'null')
    except ValueError: report = None
    if not isinstance(report, dict): report = None
    files = {}
    for rel in job.get('fetch_files') or []:
        p = os.path.normpath(os.path.join(WORKDIR, rel))
        if p.startswith(WORKDIR + '/') and os.path.isfile(p) and not os.path.islink(p):
            with open(p, 'rb') as f: files[rel] = base64.b64encode(f.read(16 << 20)).decode()
    leftover = sweep()
    shutil.rmtree(WORKDIR, ignore_errors=True)
    exit_code, error, retire = None, None, not leftover
    if timed_out:
        status, retire = 'timeout', True
        error = {'type': 'Timeout', 'message': 'the run exceeded timeout_ms=%s' % job.get('timeout_ms')}
    elif os.WIFEXITED(wstatus):
        exit_code = os.WEXITSTATUS(wstatus)
        status = 'ok' if exit_code == 0 else 'error'
        if exit_code and report:
            error = {k: str(report[k]) for k in ('type', 'message', 'traceback') if k in report}
            if report.get('memory'): status, retire = 'memory', True
        elif exit_code:
            error = {'type': 'ExitCode', 'message': 'exited with code %d' % exit_code}
    else:
        sig = os.WTERMSIG(wstatus)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        status = 'timeout' if sig == signal.SIGXCPU else 'killed'
        error = {'type': name, 'message': 'killed by signal %d (%s)' % (sig, name)}
    return {'op': 'result', 'id': job.get('id'), 'status': status, 'exit_code': exit_code,
            'stdout': bufs[out_r].decode('utf-8', 'replace'), 'stderr': bufs[err_r].decode('utf-8', 'replace'),
            'duration_ms': duration, 'truncated': {'stdout': trunc[out_r], 'stderr': trunc[err_r]},
            'error': error, 'files': files, 'retire': retire}


def sweep():
    """Kills every process the job left behind (they were reparented to us, the subreaper). False if some survive."""
    for _ in range(50):
        pids = []
        for tid in os.listdir('/proc/self/task'):
            try: pids += [int(p) for p in open('/proc/self/task/%s/children' % tid).read().split()]
            except OSError: pass
        if not pids: return True
        for p in pids:
            try: os.kill(p, signal.SIGKILL)
            except OSError: pass
        for p in pids:
            try: os.waitpid(p, 0)
            except OSError: pass
    return False


def main():
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass
    chan_in, chan = os.dup(0), os.dup(1)
    null = os.open('/dev/null', os.O_RDWR)
    for fd in (0, 1, 2): os.dup2(null, fd)
    os.close(null)
    for k in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'): os.environ[k] = '1'

    def send(frame): os.write(chan, json.dumps(frame).encode() + b'\n')
    send({'op': 'ready', 'protocol': 1, 'pid': os.getpid(), 'python': sys.version.split()[0],
          'tiers': {'bare': []}, 'packages': {}})
    buf = b''
    while True:
        data = os.read(chan_in, 1 << 20)
        if not data: break
        buf += data
        while b'\n' in buf:
            line, buf = buf.split(b'\n', 1)
            if not line.strip(): continue
            frame = json.loads(line)
            if frame.get('op') == 'shutdown': return
            if frame.get('op') == 'exec': send(run(frame))


if __name__ == '__main__':
    main()
