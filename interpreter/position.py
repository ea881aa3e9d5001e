"""Where in the program the interpreter is: the AST node of the closure being evaluated.

Compiled closures keep their node in a cell named `node`, so walking the Python stack
finds it. It costs nothing until it is asked, which happens only for warnings and signals.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def current_node(frame=None):
    """The innermost program node on the stack above `frame` (default: the caller's)."""
    frame = frame or sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if "node" in code.co_freevars and code.co_filename.startswith(_HERE):
            return frame.f_locals.get("node")
        frame = frame.f_back
    return None
