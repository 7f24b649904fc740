"""The runner's seccomp filter, added by the executor itself where the sandbox does not already have it."""
import ctypes
import os

from .libc import LIBC


class SockFprog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]


def add_seccomp(program):
    """Adds a seccomp filter (a classic BPF program: struct sock_filter items of 8 bytes) on top of the ones this
    process has; every process forked after keeps it. The runner's own (SANDFLEET_SECCOMP, base64) where the sandbox
    does not already have it (a Docker container has Docker's default profile only). Raises when it cannot."""
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buf))
    if LIBC is None:
        raise OSError('no C library to add the seccomp filter with')
    # PR_SET_NO_NEW_PRIVS (the kernel's condition for an unprivileged filter), then PR_SET_SECCOMP, SECCOMP_MODE_FILTER
    if LIBC.prctl(38, 1, 0, 0, 0) != 0 or LIBC.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'the seccomp filter was refused: %s' % os.strerror(ctypes.get_errno()))
