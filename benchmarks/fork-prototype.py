#!/usr/bin/env python3
"""The fork-on-demand prototype issue 2 measures its targets against ("one fork on demand per job, NDJSON pipes, plain
node:http": about 740 trivial and 160 sympy calls/s at concurrency 64 on the machine it was written on). Only for
side-by-side figures (benchmarks/src/fork-prototype.ts is its HTTP front); no sandbox, not part of the product.

Reads {"id", "code", "timeout_ms"} lines on stdin; for each, forks a child at once that runs the code with its fd 1 and
fd 2 on pipes; writes {"id", "status", "stdout", "stderr", "exit_code"} lines on stdout as children end.
`--preload M,...` imports modules before serving (sympy also warms its caches, as sandfleet's zygote does).
"""
import gc
import json
import os
import selectors
import signal
import sys
import time
import traceback


def preload(names):
    for name in names:
        __import__(name)
        if name == 'sympy':
            import sympy

            x = sympy.symbols('x')
            sympy.factor(x**4 - 1)


def child(code, out_w, err_w):
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    status = 0
    try:
        exec(compile(code, '<string>', 'exec'), {'__name__': '__main__'})
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    os._exit(status)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == '--preload':
        preload([n for n in sys.argv[2].split(',') if n])
    gc.collect()
    gc.freeze()
    sel = selectors.DefaultSelector()
    out = os.fdopen(os.dup(1), 'wb', buffering=0)
    null = os.open('/dev/null', os.O_RDWR)
    os.dup2(null, 1)
    os.close(null)
    stdin = sys.stdin.buffer.raw
    sel.register(stdin, selectors.EVENT_READ, None)
    jobs = {}  # pipe fd → job; a job: [id, pid, deadline, {fd: chunks}, open fds, killed at its deadline]
    buf = b''
    while True:
        now = time.monotonic()
        for job in jobs.values():  # each job twice (one entry a pipe): its flag kills it once
            if job[2] <= now and not job[5]:
                job[5] = True
                try:
                    os.kill(job[1], signal.SIGKILL)
                except OSError:
                    pass
        timeout = min((j[2] - now for j in jobs.values()), default=None)
        for key, _ in sel.select(None if timeout is None else max(timeout, 0.001)):
            if key.data is None:
                data = stdin.read(65536)
                if not data:
                    return
                buf += data
                while b'\n' in buf:
                    line, buf = buf.split(b'\n', 1)
                    req = json.loads(line)
                    out_r, out_w = os.pipe()
                    err_r, err_w = os.pipe()
                    pid = os.fork()
                    if pid == 0:
                        os.close(out_r)
                        os.close(err_r)
                        child(req['code'], out_w, err_w)
                    os.close(out_w)
                    os.close(err_w)
                    job = [
                        req.get('id'),
                        pid,
                        time.monotonic() + req.get('timeout_ms', 10000) / 1000,
                        {out_r: [], err_r: []},
                        {out_r, err_r},
                        False,
                    ]
                    for fd in (out_r, err_r):
                        jobs[fd] = job
                        sel.register(fd, selectors.EVENT_READ, job)
                continue
            job, fd = key.data, key.fd
            data = os.read(fd, 65536)
            if data:
                job[3][fd].append(data)
                continue
            sel.unregister(fd)
            os.close(fd)
            del jobs[fd]
            job[4].discard(fd)
            if job[4]:
                continue
            _, wstatus = os.waitpid(job[1], 0)
            code = os.waitstatus_to_exitcode(wstatus)
            status = 'timeout' if job[5] else 'ok' if code == 0 else 'error'
            parts = list(job[3].values())
            out.write(
                json.dumps(
                    {
                        'id': job[0],
                        'status': status,
                        'stdout': b''.join(parts[0]).decode('utf-8', 'replace'),
                        'stderr': b''.join(parts[1]).decode('utf-8', 'replace'),
                        'exit_code': code,
                    },
                    separators=(',', ':'),
                ).encode()
                + b'\n'
            )


if __name__ == '__main__':
    main()
