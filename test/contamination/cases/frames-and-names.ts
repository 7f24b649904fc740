/**
 * What reaches the reuse process's own state without an import the check refuses: the callers'
 * frames (their locals hold the process's state), modules by computed name, the C-level modules
 * as other modules' attributes, memory outside an object through public calls. The names run
 * forked; what a library reaches of the executor's frames taints the process (the audit hook).
 */
import { forked, retired, reused, type ContaminationCase } from '../types.ts'

export const FRAMES_AND_NAMES: ContaminationCase[] = [
  forked(
    "the callers' frames and their locals through traceback",
    'import traceback\nprint(len(traceback.StackSummary.extract(traceback.walk_stack(None), capture_locals=True)) > 0)'
  ),
  forked(
    "the stack printed (it walks the callers' frames)",
    'import traceback\ntraceback.print_stack()\nprint("printed")'
  ),
  forked(
    'a module by computed name in sys.modules',
    'import sys\nm = sys.modules["ct" + "ypes"]\nprint(m is not None)'
  ),
  forked('sys.modules through a from-import', 'from sys import modules\nprint(len(modules) > 0)'),
  forked("ctypes as numpy's ctypeslib", 'from numpy import ctypeslib\nprint(ctypeslib is not None)'),
  forked("an array's ctypes view", 'import numpy as np\nprint(np.arange(3).ctypes.data > 0)'),
  forked(
    'memory outside an array through stride tricks',
    'import numpy as np\nfrom numpy.lib.stride_tricks import as_strided\nprint(as_strided(np.zeros(1), shape=(1,), strides=(0,)))'
  ),
  reused(
    "a namedtuple, an Enum and a TypeVar made (each reads its caller's frame: the job's own)",
    'import enum, typing\nfrom collections import namedtuple\nP = namedtuple("P", "x")\nC = enum.Enum("C", "A B")\nT = typing.TypeVar("T")\nprint(P(1), C.A, T)'
  ),
  reused(
    "a traceback printed of the job's own exception",
    'import traceback\ntry: 1 / 0\nexcept ZeroDivisionError: traceback.print_exc()\nprint("printed")'
  ),
  retired(
    'dynamic code that walks frames, through sympify',
    'import sympy\nprint(sympy.sympify("__imp" + "ort__(\'sys\')." + "_getframe(0) is not None"))',
    'taint'
  )
]
