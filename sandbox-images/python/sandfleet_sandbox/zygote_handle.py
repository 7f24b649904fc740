"""The controller's handle on a zygote (zygote_process.py): its socket, its spare job process, its reuse process, the
exits it reported."""
import json
import os
import socket

from .reuse_handle import ReuseHandle
from .zygote_process import ZYGOTE_SOCKET, zygote


class Zygote:
    """The controller's handle on one zygote: its socket, its spare job process, its reuse process (`reuser`), the exit
    statuses it reported (`exits`) and the CPU time of each exited process (`cpu_us`)."""

    def __init__(self, name, others):
        self.name = name
        self.warm = False  # it reported its tier warm
        self.ready = False  # it has a spare
        self.dead = False
        self.modules = []  # what it preloaded
        self.ms = 0  # how long it took to warm
        self.spare = None  # (pid, the controller's ends of its pipes) of the job process it forked ahead
        self.exits = {}  # pid → wait status of each child it reaped
        self.cpu_us = {}  # pid → CPU time of each child it reaped
        self.asked = None  # the pipes sent with a request for a spare, until it comes
        self.reuser = None  # its reuse process (a reuse_handle.ReuseHandle), once it has one
        self.reuse_asked = None  # the pipes sent with a request for a reuse process, until it comes
        self.forget = set()  # reuse processes dropped before their exit came
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        controller = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                for s in [self.sock] + [z.sock for z in others]:
                    s.detach()
                os.dup2(theirs.detach(), ZYGOTE_SOCKET)
                os.closerange(3, ZYGOTE_SOCKET)
                os.closerange(ZYGOTE_SOCKET + 1, 1 << 20)  # the channel, the other zygotes' sockets
                zygote(socket.socket(fileno=ZYGOTE_SOCKET), name, controller)
            finally:
                os._exit(0)
        theirs.close()
        self.statm = os.open('/proc/%d/statm' % self.pid, os.O_RDONLY)  # read with pread at each job (Placement.limit)

    def ask(self):
        """Asks the zygote for its next job process, forked ahead of its job."""
        if self.asked is not None or self.spare is not None or self.dead or not self.warm:
            return
        self.asked = self.request(b't')

    def ask_reuse(self):
        """Asks the zygote for a reuse process (it takes its baseline at once, then waits for a job)."""
        if self.reuse_asked is not None or self.reuser is not None or self.dead or not self.warm:
            return
        self.reuse_asked = self.request(b'u')

    def request(self, kind):
        """Sends request `kind` with a new process's pipes (their other ends stay here, returned): job (read by it),
        stdout, stderr and report (written by it). None when the zygote is gone."""
        job, out, err, rep = os.pipe(), os.pipe(), os.pipe(), os.pipe()
        try:
            socket.send_fds(self.sock, [kind], [out[1], err[1], rep[1], job[0]])
        except OSError:
            for fd in (job[1], out[0], err[0], rep[0]):
                os.close(fd)
            return None
        finally:
            for fd in (out[1], err[1], rep[1], job[0]):
                os.close(fd)
        for fd in (out[0], err[0], rep[0]):
            os.set_blocking(fd, False)
        return job[1], out[0], err[0], rep[0]

    def on_message(self):
        """Reads one message; answers its (first) kind (b'r', b'c', b'x', b'e'), or None when the zygote is gone."""
        try:
            msg = self.sock.recv(4096)
        except OSError:
            msg = b''
        if not msg:
            self.dead = True
            return None
        first = None
        # a job's end and the spare forked meanwhile come together: b'x PID STATUS\nc PID'
        for part in msg.split(b'\n'):
            kind = self.on_part(part)
            first = first or kind
        return first

    def on_part(self, msg):
        kind, rest = msg[:1], msg[2:]
        if kind == b'r':
            ms, mods = rest.split(b' ', 1)
            self.ms, self.modules, self.warm = int(ms), json.loads(mods), True
            self.ask()
        elif kind == b'c':
            self.spare, self.asked, self.ready = (int(rest), self.asked), None, True
        elif kind == b'u':
            self.reuser, self.reuse_asked = ReuseHandle(int(rest), self.reuse_asked), None
        elif kind == b'x':
            pid, status, cpu_us = rest.split()
            self.exits[int(pid)] = int(status)
            self.cpu_us[int(pid)] = int(cpu_us)
        elif kind == b'e':  # the fork failed (the sandbox's process limit): asked again after the job (Leftovers)
            fds = self.reuse_asked if rest == b'u' else self.asked
            for fd in fds or ():
                os.close(fd)
            if rest == b'u':
                self.reuse_asked = None
            else:
                self.asked = None
        return kind
