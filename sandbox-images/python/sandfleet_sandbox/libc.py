"""The C library, for the system calls Python's os module lacks (prctl, madvise, the System V IPC controls)."""
import ctypes

try:
    LIBC = ctypes.CDLL(None, use_errno=True)
except OSError:
    LIBC = None


def prctl(option, arg):
    if LIBC is not None:
        LIBC.prctl(option, arg, 0, 0, 0)
