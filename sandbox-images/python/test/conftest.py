import os
import sys

# The package and build.py, as the sandbox's programs are built from them.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
