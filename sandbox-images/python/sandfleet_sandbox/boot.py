"""The executor's start: it runs itself again, at once, in a fresh interpreter.

A process that compiled the executor keeps the compiler's garbage in its heap, and each zygote
forked from it would copy the entries of those pages at every fork, once per job. So the executor starts again in a
fresh interpreter that runs the program's code object,
unmarshalled from a memfd: nothing compiled there. First in `executor.py`, so that
`sys._getframe().f_code` is the whole program's code; as a module of the package it does nothing.
"""
import marshal
import os
import sys

_BOOT = (
    'import marshal, os, sys; fd = int(sys.argv.pop(1)); code = marshal.loads(os.pread(fd, os.fstat(fd).st_size, 0)); '
    'os.close(fd); exec(code, {"__name__": "__main__", "__file__": code.co_filename, '
    '"__builtins__": __builtins__, "FROM_CODE": True})'
)
if __name__ == '__main__' and not globals().get('FROM_CODE'):
    try:
        _fd = os.memfd_create('executor', 0)  # inherited by the new program
        os.write(_fd, marshal.dumps(sys._getframe().f_code))
        os.execv(sys.executable, [sys.executable, '-I', '-c', _BOOT, str(_fd)])
    except (OSError, ValueError, AttributeError):
        pass  # run on here, compiler garbage and all
