"""The state of one program run: grad mode, limits, random numbers, observers, print options,
the in-memory files.

Everything PyTorch keeps per process (and a tool keeps per run) lives in one `Session`
object, held in a context variable: two programs run in two threads (or two contexts) of
one process never see each other's grad mode, memory limit or random stream. Library code
that runs no program gets a default session per thread, like a fresh Python process.

    with Session(max_bytes=1 << 30).active():
        ...   # engine calls here see this session

Hot paths read `current()` once per op (a context-variable lookup costs about as much as
the class attribute it replaced).
"""

from __future__ import annotations

import contextvars
import os
import time
from contextlib import contextmanager

from .classes import TorchClass
from .observer import Observer, Observers  # noqa: F401 - the interface tools subclass


def machine_memory() -> int:
    """Physical memory in bytes (0 when unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


# the largest single tensor by default: a quarter of the machine leaves room for the graph
DEFAULT_MAX_BYTES = machine_memory() // 4 or None


class PrintOptions:
    """torch.set_printoptions: what `print(tensor)` uses."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self) -> None:
        self.precision = 4
        self.threshold = 1000  # summarize when numel() is strictly greater
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None  # None: decided per tensor


class Session:
    """One run's engine state. `observers` holds the tools watching the run (`autodiff
    explain`, `graph`, `check`, the REPL): see core/observer.py."""

    __slots__ = ("grad_enabled", "max_bytes", "deadline", "timeout", "generator",
                 "observers", "print_options", "anomaly", "inference", "inference_grad", "hook_ids",
                 "warned_once", "cudnn", "files", "__weakref__")

    def __init__(self, *, max_bytes: int | None = DEFAULT_MAX_BYTES,
                 timeout: float | None = None) -> None:
        self.grad_enabled = True
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.generator = None  # made on first draw: numpy.random costs ~6 ms to import
        self.observers = Observers()
        self.print_options = PrintOptions()
        self.anomaly = None  # anomaly mode: None (off), else whether it checks for NaN
        # `grad_enabled` says whether ops record; inside inference mode nothing records, and
        # the grad mode the program sets there (torch.is_grad_enabled()) is `inference_grad`
        self.inference = False
        self.inference_grad = False
        self.hook_ids = 0  # torch.utils.hooks.RemovableHandle.next_id: a process's count
        self.warned_once: set = set()  # torch's TORCH_WARN_ONCE warnings given in this run
        self.cudnn: dict | None = None  # torch.backends.cudnn's flags the program set
        self.files = None  # the run's in-memory files (core/files.py), made on first use

    def for_run(self, *, timeout: float | None = None) -> "Session":
        """A session for a program run inside this one: a fresh process's state, this
        session's memory limit and observers (a tool watching runs watches each; what is
        attached to the run's session stays the run's)."""
        run = Session(max_bytes=self.max_bytes, timeout=timeout)
        run.observers = self.observers.copy()
        return run

    @contextmanager
    def active(self):
        """Make this the current session while the block runs (in this context only)."""
        import numpy as np  # here, not at import: the console script's watching process has none

        if self.timeout is not None:
            self.deadline = time.monotonic() + self.timeout
        token = _current.set(self)
        try:
            with np.errstate(all="ignore"):  # torch makes inf/nan silently (NumPy 2: per context)
                yield self
        finally:
            _current.reset(token)


# Outside any run (library use, tests), engine calls see this default session, as code in a
# fresh Python process sees torch's process state.
DEFAULT_SESSION = Session()
_current: contextvars.ContextVar[Session] = contextvars.ContextVar("autodiff_session",
                                                                  default=DEFAULT_SESSION)
current = _current.get  # the running program's session (a C call: ops read it on every call)


def files():
    """The running program's file system (in memory: a program never sees the host's files)."""
    session = current()
    if session.files is None:
        from .files import FileSystem  # noqa: PLC0415 - only for programs that use files

        session.files = FileSystem()
    return session.files


def warn_once(message: str, stacklevel: int, category: type = UserWarning) -> None:
    """A warning torch gives once a process (TORCH_WARN_ONCE): once a run here, from whichever
    line reaches it first (Python's own filter would repeat it for each line)."""
    given = current().warned_once
    if message not in given:
        given.add(message)
        import warnings  # noqa: PLC0415 - the rare path only

        warnings.warn(message, category, stacklevel=stacklevel + 1)


def check_allocation(shape, dtype) -> None:
    """Refuse a tensor larger than the session's limit, naming its shape and size."""
    limit = current().max_bytes
    if limit is None:
        return
    count = 1
    for n in shape:
        if type(n) is not int:
            break
        count *= n
    else:
        if count <= limit >> 4:  # fits even at 16 bytes an element: no dtype lookup needed
            return
    import numpy as np  # here: the console script's watching process needs this module, not NumPy
    count = 1
    for n in shape:
        count *= int(n)
    size = count * np.dtype(dtype).itemsize
    if size > limit:
        raise MemoryError(
            f"a tensor of shape {list(map(int, shape))} ({np.dtype(dtype).name}) needs "
            f"{size:,} bytes, over the memory limit of {limit:,} bytes (--max-memory)")


_C_INT = {"int64": "int64_t", "int32": "int"}  # the C type names torch's message uses


def check_fill_value(value, dtype) -> None:
    """A Python number filled into an integer tensor must fit its dtype (NumPy would raise
    its own OverflowError, or wrap): torch's error."""
    if type(value) not in (int, float) or dtype.kind != "i":
        return
    bits = dtype.itemsize * 8 - 1
    if type(value) is int and value < -(1 << bits) and dtype.name == "int64":
        raise OverflowError("can't convert negative int to unsigned")  # (torch's own words)
    if not -(1 << bits) <= value < 1 << bits:  # (a float nan fails it too)
        raise RuntimeError(f"value cannot be converted to type {_C_INT[dtype.name]} without "
                           "overflow")


# --- grad mode -------------------------------------------------------------------------------

def is_grad_enabled() -> bool:
    session = current()
    return session.inference_grad if session.inference else session.grad_enabled


def is_inference_mode_enabled() -> bool:
    return current().inference


class _GradModeContext(metaclass=TorchClass):
    """no_grad / enable_grad: switch grad mode inside `with` (or a decorated function).

    As torch 2.x does, the class itself also decorates: `@torch.no_grad` (no parentheses)."""

    _tg_public = frozenset()
    _target = True

    def __new__(cls, function=None):
        if function is None:
            return super().__new__(cls)
        return cls()(function)

    def _switch(self, session):
        """Enter this mode; returns what leaving it restores."""
        if session.inference:  # (the mode the program sees: nothing records in inference mode)
            previous, session.inference_grad = session.inference_grad, self._target
        else:
            previous, session.grad_enabled = session.grad_enabled, self._target
        return previous

    def _restore(self, session, previous) -> None:
        if session.inference:
            session.inference_grad = previous
        else:
            session.grad_enabled = previous

    def __enter__(self):
        self._previous = self._switch(current())
        return None

    def __exit__(self, *exc):
        self._restore(current(), self._previous)
        return False

    def __call__(self, function):
        """As a decorator: the function runs in this grad mode (a generator function's steps
        each run in it, as torch's decorators wrap one)."""
        if getattr(function, "tg_generator", False):
            return self._each_step(function)

        def run_in_mode(*args, **kwargs):
            session = current()
            previous = self._switch(session)
            try:
                return function(*args, **kwargs)
            finally:
                self._restore(session, previous)
        run_in_mode.__name__ = getattr(function, "__name__", "f")
        run_in_mode.__qualname__ = getattr(function, "__qualname__", run_in_mode.__name__)
        run_in_mode.__module__ = getattr(function, "__module__", None)  # as functools.wraps does
        return run_in_mode

    def _each_step(self, function):
        def steps_in_mode(*args, **kwargs):
            session = current()
            previous = self._switch(session)
            try:
                steps = function(*args, **kwargs)
            finally:
                self._restore(session, previous)
            while True:
                previous = self._switch(session)
                try:
                    item = next(steps)
                except StopIteration:
                    return
                finally:
                    self._restore(session, previous)
                yield item
        steps_in_mode.__name__ = steps_in_mode.__qualname__ = getattr(function, "__name__", "f")
        return steps_in_mode

    def __repr__(self) -> str:
        return f"<torch.autograd.grad_mode.{type(self).__name__} object at {id(self):#x}>"


def is_anomaly_enabled() -> bool:
    return current().anomaly is not None


def is_anomaly_check_nan_enabled() -> bool:
    anomaly = current().anomaly
    return True if anomaly is None else anomaly


class set_detect_anomaly(metaclass=TorchClass):
    """torch.autograd.set_detect_anomaly(mode, check_nan=True): anomaly mode on or off from
    the call on (as set_grad_enabled, and back when used as a `with`). In anomaly mode a
    backward step whose gradient holds a NaN stops the pass with torch's error (graph/nodes.py)."""

    _tg_public = frozenset()

    def __init__(self, mode, check_nan=True) -> None:
        session = current()
        self._previous = session.anomaly
        session.anomaly = bool(check_nan) if mode else None

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        current().anomaly = self._previous
        return False

    def __repr__(self) -> str:
        return f"<torch.autograd.anomaly_mode.{type(self).__name__} object at {id(self):#x}>"


class detect_anomaly(set_detect_anomaly):
    """torch.autograd.detect_anomaly(check_nan=True): anomaly mode inside a `with`."""

    def __init__(self, check_nan=True) -> None:
        self._check_nan = bool(check_nan)

    def __enter__(self):
        session = current()
        self._previous = session.anomaly
        session.anomaly = self._check_nan
        return None


class no_grad(_GradModeContext):
    _target = False


class enable_grad(_GradModeContext):
    _target = True


class inference_mode(_GradModeContext):
    """torch.inference_mode(mode=True): nothing records inside (whatever grad mode the program
    then sets, which torch.is_grad_enabled() reports), and torch.is_inference_mode_enabled()
    says so; `mode=False` leaves inference mode and turns grad mode on, as torch's guard does.
    What is made inside is an inference tensor (core/inference.py)."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # `@torch.inference_mode` without parentheses: `mode` is the function

    def __init__(self, mode=True):
        self._mode = mode

    def _switch(self, session):
        previous = (session.grad_enabled, session.inference, session.inference_grad)
        if self._mode:
            session.grad_enabled = session.inference_grad = False
            session.inference = True
        else:
            session.grad_enabled = True
            session.inference = False
        return previous

    def _restore(self, session, previous) -> None:
        session.grad_enabled, session.inference, session.inference_grad = previous


class set_grad_enabled(_GradModeContext):
    """Switches at once (torch does, so a plain call works); as `with`, restores on exit the
    mode that was current when it was made."""

    def __new__(cls, mode: bool):
        return object.__new__(cls)

    def __init__(self, mode: bool):
        self._target = bool(mode)
        self._previous = self._switch(current())

    def __enter__(self):
        return None

    def __repr__(self) -> str:
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self._target})"
