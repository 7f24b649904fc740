"""sandfleet's sandbox side in Python: the executor and the session host, as modules.

Nothing imports this package in a sandbox: `build.py` (beside it) joins its modules, in the order
its ENTRIES give, into one file per program (`executor.py`, `session_host.py`), the files the
images and the backends run. The modules import each other only as `from .name import ...` at
their top, and each top-level name is defined once across a program's modules, so the joined file
runs as they do here. The unit tests (`test/`) import the modules themselves.
"""
