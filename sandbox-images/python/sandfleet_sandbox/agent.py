"""A session's agent: its files and its processes, in the session's own namespaces (the sandbox surface a session
offers beside its cells: what E2B's envd gives a sandbox).

It speaks NDJSON with the runner over its own socket. A request is `{"id": N, "op": ...}`; a one-shot answer is
`{"id": N, "ok": {...}}` or `{"id": N, "error": {"kind", "message"}}`, `kind` one of not_found, exists, invalid,
denied, too_large, io. A process started (`start`) or reattached (`connect`) answers a stream of events instead:
`{"id": N, "event": "start", "pid"}`, then `stdout` and `stderr` (`data`: base64), then `end` (`exit_code`, `exited`,
`status`) and nothing more for N; `{"op": "detach", "stream": N}` stops a stream (the process runs on).

Ops: read, write, stat, list (depth), mkdir, move, remove on files (a path relative to the session's home, or
absolute; what changes a file must lie in one of the session's writable places); start (cmd, args, envs, cwd, stdin,
tag), connect, ps, signal (9 or 15, to the process's group), stdin, close_stdin on processes. A process runs in a
process group of its own, with the session's environment and its own, and the session's memory limit as its address
space limit (plus room for the program itself).

Where the session has namespaces of its own the agent is its pid 1 (host.py's init_main): it reaps every process of
the session, and leaves, taking the namespace's processes with it, when the runner closes its socket.
"""
import base64
import errno
import json
import os
import resource
import select
import shutil
import signal
import stat
import time

from .files import place_of

READ_MAX_BYTES = 64 << 20  # a larger file is refused (too_large), not cut
END_GRACE_S = 0.2  # after a process exits, how long its pipes may stay open (a child it left holds them) before its end
PROGRAM_ROOM_MB = 256  # a process's address space beyond the session's memory_mb: its program and libraries
SIGNALS = {9: signal.SIGKILL, 15: signal.SIGTERM}
FILE_TYPES = ((stat.S_ISREG, 'file'), (stat.S_ISDIR, 'dir'), (stat.S_ISLNK, 'symlink'))


class AgentError(Exception):
    """A request the agent refuses: `kind` says which (see the module comment)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def os_error(err, path):
    """The AgentError of an OSError about `path`."""
    kinds = {
        errno.ENOENT: 'not_found',
        errno.ENOTDIR: 'not_found',
        errno.EEXIST: 'exists',
        errno.ENOTEMPTY: 'exists',
        errno.EACCES: 'denied',
        errno.EPERM: 'denied',
        errno.EROFS: 'denied',
        errno.EISDIR: 'invalid',
        errno.EFBIG: 'too_large',
        errno.ENOSPC: 'too_large',
    }
    return AgentError(kinds.get(err.errno, 'io'), '%s: %s' % (path, err.strerror or err))


def entry_of(path):
    """What a file is, as the agent answers it (its last link not followed)."""
    st = os.lstat(path)
    kind = next((name for test, name in FILE_TYPES if test(st.st_mode)), 'other')
    entry = {
        'name': os.path.basename(path) or '/',
        'type': kind,
        'path': path,
        'size': st.st_size,
        'mode': stat.S_IMODE(st.st_mode),
        'permissions': stat.filemode(st.st_mode),
        'owner': str(st.st_uid),
        'group': str(st.st_gid),
        'mtime': st.st_mtime,
    }
    if kind == 'symlink':
        entry['symlink_target'] = os.readlink(path)
    return entry


class Proc:
    """One process the agent started: its pipes, who listens to it, how it ended."""

    def __init__(self, pid, config, out_fd, err_fd, in_fd):
        self.pid, self.config = pid, config
        self.fds = {out_fd: 'stdout', err_fd: 'stderr'}
        self.stdin, self.pending = in_fd, bytearray()
        self.listeners = set()
        self.status, self.ended_at = None, None


class Agent:
    """The agent loop of one session; see the module comment."""

    def __init__(self, conn, home, places, env, memory_mb):
        self.conn = conn
        self.buffered = b''
        self.home, self.places, self.env = home, places, env
        self.memory_mb = memory_mb
        self.procs = {}
        self.by_fd = {}
        self.gone = False

    # -- the loop

    def serve(self):
        """Answers requests until the runner closes the socket; then every process it started is killed."""
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        conn_fd = self.conn.fileno()
        try:
            while True:
                readable = [conn_fd, wake_r, *self.by_fd]
                writable = [p.stdin for p in self.procs.values() if p.stdin is not None and p.pending]
                ready, can_write, _ = select.select(readable, writable, [], self.wait_s())
                if wake_r in ready:
                    try:
                        while os.read(wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                self.reap()
                for fd in ready:
                    if fd in self.by_fd:
                        self.pipe_ready(fd)
                for fd in can_write:
                    self.feed(fd)
                if (conn_fd in ready and not self.requests()) or self.gone:
                    return
                self.finish()
        finally:
            for pid in list(self.procs):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass

    def wait_s(self):
        """How long select may wait: until the first exited process's pipes are given up on, or a reap's tick."""
        ended = [p.ended_at for p in self.procs.values() if p.ended_at is not None]
        if ended:
            return max(0.0, min(ended) + END_GRACE_S - time.monotonic())
        return 1.0 if self.procs else None

    def requests(self):
        """Reads what the socket holds and answers each whole request in it; False at the socket's end."""
        chunk = self.conn.recv(1 << 20)
        if not chunk:
            return False
        self.buffered += chunk
        *lines, self.buffered = self.buffered.split(b'\n')
        for line in lines:
            if line:
                self.request(line)
        return True

    def request(self, line):
        """Answers one request."""
        try:
            frame = json.loads(line)
        except ValueError:
            return
        rid = frame.get('id')
        op = frame.get('op')
        if op == 'detach':
            for p in self.procs.values():
                p.listeners.discard(frame.get('stream'))
            return
        try:
            if op in ('start', 'connect'):
                getattr(self, 'op_' + op)(rid, frame)
                return
            handler = getattr(self, 'op_' + str(op), None)
            if handler is None:
                raise AgentError('invalid', 'unknown op %r' % op)
            self.send({'id': rid, 'ok': handler(frame)})
        except AgentError as e:
            self.send({'id': rid, 'error': {'kind': e.kind, 'message': str(e)}})
        except ValueError as e:
            self.send({'id': rid, 'error': {'kind': 'invalid', 'message': str(e)}})
        except OSError as e:
            self.send({'id': rid, 'error': {'kind': 'io', 'message': str(e)}})

    def send(self, frame):
        """Sends one answer or event; once the runner is gone, nothing (the loop then ends at the socket's end)."""
        if self.gone:
            return
        try:
            self.conn.sendall((json.dumps(frame) + '\n').encode())
        except OSError:
            self.gone = True

    # -- files

    def path_of(self, frame, key='path'):
        """The absolute path a request names (relative: to the home)."""
        path = frame.get(key)
        if not isinstance(path, str) or path == '':
            return self.home
        if '\0' in path:
            raise AgentError('invalid', '%r holds a NUL byte' % path)
        return os.path.normpath(os.path.join(self.home, path))

    def writable(self, path):
        """`path` if it lies in one of the session's writable places (a link out of them counts as outside)."""
        try:
            place_of(self.home, path, self.places)
        except ValueError as e:
            raise AgentError('denied', str(e))
        return path

    def op_read(self, frame):
        path = self.path_of(frame)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            raise os_error(e, path)
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise AgentError('invalid', '%s is a directory' % path)
            if not stat.S_ISREG(st.st_mode):
                raise AgentError('invalid', '%s is not a regular file' % path)
            with open(fd, 'rb', closefd=False) as f:
                data = f.read(READ_MAX_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) > READ_MAX_BYTES:
            raise AgentError('too_large', '%s is larger than %d bytes' % (path, READ_MAX_BYTES))
        return {'data': base64.b64encode(data).decode()}

    def op_write(self, frame):
        path = self.writable(self.path_of(frame))
        data = base64.b64decode(frame.get('data') or '')
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'wb') as f:
                f.write(data)
            return {'entry': entry_of(path)}
        except OSError as e:
            raise os_error(e, path)

    def op_stat(self, frame):
        path = self.path_of(frame)
        try:
            return {'entry': entry_of(path)}
        except OSError as e:
            raise os_error(e, path)

    def op_list(self, frame):
        path = self.path_of(frame)
        depth = max(1, int(frame.get('depth') or 1))
        try:
            if not stat.S_ISDIR(os.stat(path).st_mode):
                raise AgentError('invalid', '%s is not a directory' % path)
            entries = []
            self.walk(path, depth, entries)
            return {'entries': entries}
        except OSError as e:
            raise os_error(e, path)

    def walk(self, path, depth, entries):
        for name in sorted(os.listdir(path)):
            child = os.path.join(path, name)
            try:
                entry = entry_of(child)
            except OSError:
                continue  # gone meanwhile
            entries.append(entry)
            if depth > 1 and entry['type'] == 'dir':
                try:
                    self.walk(child, depth - 1, entries)
                except OSError:
                    pass

    def op_mkdir(self, frame):
        path = self.writable(self.path_of(frame))
        if os.path.lexists(path):
            raise AgentError('exists', '%s already exists' % path)
        try:
            os.makedirs(path)
            return {'entry': entry_of(path)}
        except OSError as e:
            raise os_error(e, path)

    def op_move(self, frame):
        source = self.writable(self.path_of(frame, 'source'))
        destination = self.writable(self.path_of(frame, 'destination'))
        try:
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            shutil.move(source, destination)
            return {'entry': entry_of(destination)}
        except OSError as e:
            raise os_error(e, source)

    def op_remove(self, frame):
        path = self.writable(self.path_of(frame))
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            return {}
        except OSError as e:
            raise os_error(e, path)

    # -- processes

    def op_start(self, rid, frame):
        cmd = frame.get('cmd')
        args = frame.get('args') or []
        envs = frame.get('envs') or {}
        if not isinstance(cmd, str) or cmd == '' or not all(isinstance(a, str) for a in args):
            raise AgentError('invalid', 'a process needs a command (cmd) and string args')
        cwd = self.path_of(frame, 'cwd')
        if not os.path.isdir(cwd):
            raise AgentError('invalid', 'working directory %s does not exist' % cwd)
        env = dict(self.env)
        env.update({str(k): str(v) for k, v in envs.items()})
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if frame.get('stdin') else (os.open(os.devnull, os.O_RDONLY), None)
        pid = os.fork()
        if pid == 0:
            self.child(cmd, args, env, cwd, in_r, out_w, err_w)
        for fd in (out_w, err_w, in_r):
            os.close(fd)
        if in_w is not None:
            os.set_blocking(in_w, False)
        config = {'cmd': cmd, 'args': args, 'envs': envs, 'cwd': cwd}
        if isinstance(frame.get('tag'), str):
            config['tag'] = frame['tag']
        proc = Proc(pid, config, out_r, err_r, in_w)
        self.procs[pid] = proc
        self.by_fd[out_r] = self.by_fd[err_r] = proc
        proc.listeners.add(rid)
        self.send({'id': rid, 'event': 'start', 'pid': pid})

    def child(self, cmd, args, env, cwd, in_r, out_w, err_w):
        """In the forked child: its own process group, its pipes as fds 0-2, nothing else open, its limits; then the
        program. Never returns."""
        try:
            os.setpgid(0, 0)
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
            limit = (self.memory_mb + PROGRAM_ROOM_MB) << 20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            os.chdir(cwd)
            os.execvpe(cmd, [cmd, *args], env)
        except BaseException as e:  # noqa: BLE001 - the child never returns into the agent
            try:
                os.write(2, ('%s: %s\n' % (cmd, e)).encode())
            except OSError:
                pass
        os._exit(127)

    def op_connect(self, rid, frame):
        proc = self.proc_of(frame)
        proc.listeners.add(rid)
        self.send({'id': rid, 'event': 'start', 'pid': proc.pid})

    def proc_of(self, frame):
        pid = frame.get('pid')
        proc = self.procs.get(pid) if isinstance(pid, int) else None
        if proc is None or proc.status is not None:
            raise AgentError('not_found', 'no running process %s' % pid)
        return proc

    def op_ps(self, frame):
        return {
            'processes': [{'pid': p.pid, **p.config} for p in self.procs.values() if p.status is None],
        }

    def op_signal(self, frame):
        proc = self.proc_of(frame)
        sig = SIGNALS.get(frame.get('signal'))
        if sig is None:
            raise AgentError('invalid', 'signal %r is not one of %s' % (frame.get('signal'), sorted(SIGNALS)))
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            os.kill(proc.pid, sig)
        return {}

    def op_stdin(self, frame):
        proc = self.proc_of(frame)
        if proc.stdin is None:
            raise AgentError('invalid', 'process %d was started without stdin' % proc.pid)
        proc.pending += base64.b64decode(frame.get('data') or '')
        self.feed(proc.stdin)
        return {}

    def op_close_stdin(self, frame):
        proc = self.proc_of(frame)
        if proc.stdin is not None:
            os.close(proc.stdin)
            proc.stdin = None
        return {}

    def feed(self, fd):
        """Writes what a process's stdin may take now of what waits for it."""
        proc = next((p for p in self.procs.values() if p.stdin == fd), None)
        if proc is None or not proc.pending:
            return
        try:
            n = os.write(fd, proc.pending)
            del proc.pending[:n]
        except BlockingIOError:
            pass
        except OSError:  # the process closed its stdin
            proc.pending.clear()

    def pipe_ready(self, fd):
        proc = self.by_fd[fd]
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b''
        if not chunk:
            self.close_pipe(proc, fd)
            return
        data = base64.b64encode(chunk).decode()
        for rid in list(proc.listeners):
            self.send({'id': rid, 'event': proc.fds[fd], 'data': data})

    def close_pipe(self, proc, fd):
        del self.by_fd[fd]
        del proc.fds[fd]
        os.close(fd)

    def reap(self):
        """Reaps every exited child (as pid 1 of the session, also what is not its own) and notes how its own ended."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            proc = self.procs.get(pid)
            if proc is not None:
                proc.status, proc.ended_at = status, time.monotonic()

    def finish(self):
        """Ends the processes that exited and whose pipes are closed, or held open past the grace."""
        now = time.monotonic()
        for pid, proc in list(self.procs.items()):
            if proc.ended_at is None or (proc.fds and now < proc.ended_at + END_GRACE_S):
                continue
            for fd in list(proc.fds):
                self.drain(proc, fd)
            if proc.stdin is not None:
                os.close(proc.stdin)
            del self.procs[pid]
            end = {'event': 'end', **ending(proc.status)}
            for rid in proc.listeners:
                self.send({'id': rid, **end})

    def drain(self, proc, fd):
        """What a pipe holds now, sent; then it is closed."""
        try:
            os.set_blocking(fd, False)
            chunk = os.read(fd, 1 << 20)
            if chunk:
                data = base64.b64encode(chunk).decode()
                for rid in proc.listeners:
                    self.send({'id': rid, 'event': proc.fds[fd], 'data': data})
        except OSError:
            pass
        self.close_pipe(proc, fd)


def ending(status):
    """How a process ended, as its end event says it: an exit code, or -1 and the signal that killed it."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        names = {signal.SIGKILL: 'killed', signal.SIGTERM: 'terminated'}
        return {'exit_code': -1, 'exited': False, 'status': 'signal: %s' % names.get(sig, 'signal %d' % sig)}
    code = os.WEXITSTATUS(status)
    return {'exit_code': code, 'exited': True, 'status': 'exit status %d' % code}
