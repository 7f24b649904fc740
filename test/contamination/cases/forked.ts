/** Code that names what the check cannot follow: it runs forked, and the reuse process never sees it. */
import { forked, type ContaminationCase } from '../types.ts'

export const FORKED: ContaminationCase[] = [
  forked('builtins.print replaced', 'import builtins\nbuiltins.print = lambda *a, **k: None\nprint("hidden")'),
  forked('ctypes', 'import ctypes\nprint(ctypes.CDLL(None).getpid() > 0)'),
  forked('gc.get_objects', 'import gc\nprint(len(gc.get_objects()) > 0)'),
  forked('sys.settrace', 'import sys\nsys.settrace(lambda *a: None)\nprint("traced")'),
  forked('object.__subclasses__', 'print(len(object.__subclasses__()) > 0)'),
  forked(
    'a frame reached through a traceback',
    'import sys\ntry: 1 / 0\nexcept ZeroDivisionError: print(sys.exc_info()[2].tb_frame is not None)'
  ),
  forked('an attribute by computed name', 'import json\nsetattr(json, "dump" + "s", None)\nprint("set")'),
  forked(
    'an ABC registered',
    'from collections.abc import Sequence\nSequence.register(dict)\nprint(isinstance({}, Sequence))'
  ),
  forked('a finalizer (__del__)', 'class A:\n    def __del__(self): print("DEL")\nkeep = A()\nprint("made")'),
  forked(
    'an atexit handler (it runs at the end, as in any fork)',
    'import atexit\natexit.register(print, "bye")\nprint("registered")'
  ),
  forked('rlimits raised', 'import resource\nprint(resource.getrlimit(resource.RLIMIT_AS)[0] != 0)')
]
