"""`sys` and `time` as a program sees them: the host's version, platform and clocks (facts a
program may read), the program's own file name as `argv`, its own output streams, a
recursion limit of its own, and `sleep` in short slices so that the run's deadline stops it.
`sys.path`, `sys.modules` and the rest of each module are refused by name."""

from __future__ import annotations

import operator
import sys as _sys
import time as _time
from typing import Any

from .. import bounds
from ..deadline import ProgramStopped
from ..pybuiltins import builtin
from .module import StdModule, public


class _Stream:
    """`sys.stdout` / `sys.stderr`: `write` and `flush` on the run's own stream."""

    _tg_public = frozenset({"write", "flush"})
    __slots__ = ("_rt", "_name")

    def __init__(self, rt: Any, name: str) -> None:
        self._rt, self._name = rt, name

    def _stream(self):
        stream = getattr(self._rt, "err" if self._name == "stderr" else "out", None)
        return stream if stream is not None else getattr(_sys, self._name)

    def write(self, text: Any) -> int:
        if type(text) is not str:
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._stream().write(text)
        return len(text)

    def flush(self) -> None:
        self._stream().flush()

    def __repr__(self) -> str:
        return f"<_io.TextIOWrapper name='<{self._name}>' mode='w' encoding='utf-8'>"


class SystemExitStop(ProgramStopped):
    """`sys.exit(...)`: the program ends here with Python's exit status (0 ends it as a
    program that ran to its end does; see Program._whole_program)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__("SystemExit", message, code)


def _exit(*args: Any) -> None:
    if len(args) > 1:
        raise TypeError(f"exit expected at most 1 argument, got {len(args)}")
    status = args[0] if args else None
    if status is None:
        raise SystemExitStop(0, "")
    if type(status) is int or type(status) is bool:
        raise SystemExitStop(int(status) & 0xFF, "")
    raise SystemExitStop(1, bounds.text(status))  # Python prints it to stderr, exit status 1


_PYTHON_RECURSION_LIMIT = 1000  # what a fresh CPython reports; the language's own depth is
# interpreter/runtime.MAX_CALL_DEPTH, whatever a program sets


class SysModule(StdModule):
    _tg_module_name = "sys"
    _tg_public = public("argv version version_info platform maxsize float_info int_info",
                        "byteorder hexversion maxunicode exit stdout stderr getrecursionlimit",
                        "setrecursionlimit getdefaultencoding")

    def __init__(self, rt: Any) -> None:
        self.argv = [getattr(rt, "filename", None) or "<stdin>"]
        self.version, self.version_info, self.hexversion = (
            _sys.version, _sys.version_info, _sys.hexversion)
        self.platform, self.maxsize, self.maxunicode = _sys.platform, _sys.maxsize, _sys.maxunicode
        self.float_info, self.int_info, self.byteorder = _sys.float_info, _sys.int_info, _sys.byteorder
        self.stdout, self.stderr = _Stream(rt, "stdout"), _Stream(rt, "stderr")
        self.exit = builtin("exit", _exit)
        limit = [_PYTHON_RECURSION_LIMIT]

        def getrecursionlimit() -> int:
            return limit[0]

        def setrecursionlimit(new: Any) -> None:
            new = operator.index(new)
            if new > 2 ** 31 - 1:
                raise OverflowError("Python int too large to convert to C int")
            if new < 1:
                raise ValueError("recursion limit must be greater or equal than 1")
            limit[0] = new
        self.getrecursionlimit = builtin("getrecursionlimit", getrecursionlimit)
        self.setrecursionlimit = builtin("setrecursionlimit", setrecursionlimit)
        self.getdefaultencoding = builtin("getdefaultencoding", lambda: "utf-8")


_MAX_NANOSECONDS = 2 ** 63 - 1  # CPython's clock type
_SLICE = 0.05  # seconds: a deadline raised in another thread lands between slices


def _sleep(*args: Any) -> None:
    if len(args) != 1:
        raise TypeError(f"time.sleep() takes exactly one argument ({len(args)} given)")
    seconds = args[0]
    if type(seconds) not in (int, float, bool):
        raise TypeError(f"'{type(seconds).__name__}' object cannot be interpreted as an integer")
    if not 0 <= seconds * 1_000_000_000 <= _MAX_NANOSECONDS:  # (NaN too)
        _time.sleep(seconds)  # Python's own error, at once
    end = _time.monotonic() + seconds
    while True:
        left = end - _time.monotonic()
        if left <= 0:
            return
        _time.sleep(min(left, _SLICE))


def _strftime(*args: Any) -> str:
    if args and type(args[0]) is str and len(args[0]) * 40 > bounds.MAX_ITEMS:
        raise bounds.too_long("time.strftime", len(args[0]) * 40)
    return _time.strftime(*args)


class TimeModule(StdModule):
    _tg_module_name = "time"
    _tg_public = public("time time_ns perf_counter perf_counter_ns monotonic monotonic_ns",
                        "process_time process_time_ns sleep strftime localtime gmtime mktime",
                        "asctime ctime struct_time")

    def __init__(self) -> None:
        for name in self._tg_public - {"sleep", "strftime"}:
            setattr(self, name, getattr(_time, name))
        self.sleep = builtin("sleep", _sleep)
        self.strftime = builtin("strftime", _strftime)


STRUCT_FIELDS = {type(_sys.version_info): public("major minor micro releaselevel serial count index"),
                 type(_sys.float_info): public("max max_exp max_10_exp min min_exp min_10_exp dig",
                                               "mant_dig epsilon radix rounds count index"),
                 type(_sys.int_info): public("bits_per_digit sizeof_digit default_max_str_digits",
                                             "str_digits_check_threshold count index"),
                 _time.struct_time: public("tm_year tm_mon tm_mday tm_hour tm_min tm_sec tm_wday",
                                           "tm_yday tm_isdst tm_zone tm_gmtoff count index")}
