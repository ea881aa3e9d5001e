"""Render tensors, dtypes, sizes and autograd objects exactly as PyTorch 2.13 prints them.

Everything here is a function of NumPy data and of the run's print options
(`torch.set_printoptions`: precision 4, threshold 1000, edgeitems 3, linewidth 80 and
sci_mode auto by default); the engine passes its arrays plus the autograd facts
(requires_grad, grad_fn name). The rules were worked out by observing torch's output,
case by case.
"""

from __future__ import annotations

import numpy as np

from .session import current


_PREFIX = "tensor("

_DTYPE_NAMES: dict[np.dtype, str] = {
    np.dtype(np.float32): "torch.float32",
    np.dtype(np.float64): "torch.float64",
    np.dtype(np.float16): "torch.float16",
    np.dtype(np.int64): "torch.int64",
    np.dtype(np.int32): "torch.int32",
    np.dtype(np.int16): "torch.int16",
    np.dtype(np.int8): "torch.int8",
    np.dtype(np.uint8): "torch.uint8",
    np.dtype(np.bool_): "torch.bool",
}

# dtypes torch does not name in the suffix of a non-empty tensor (default float, long, bool)
_IMPLICIT_DTYPES = (np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.bool_))


def format_dtype(dtype: np.dtype) -> str:
    """`str(t.dtype)`, e.g. "torch.float32"."""
    try:
        return _DTYPE_NAMES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"unsupported dtype {dtype!r}") from None


def format_size(shape: tuple[int, ...]) -> str:
    """`str(t.shape)`, e.g. "torch.Size([2, 3])"."""
    return "torch.Size([" + ", ".join(str(int(n)) for n in shape) + "])"


def format_grad_fn(name: str, address: int) -> str:
    """Default CPython repr of a grad_fn node, e.g. "<MulBackward0 object at 0x7f3a...>"."""
    return f"<{name} object at {address:#x}>"


def format_return_type(kind: str, values: str, indices: str) -> str:
    """repr of torch.return_types.<kind>; the tensor strings are inserted unindented."""
    return f"torch.return_types.{kind}(\nvalues={values},\nindices={indices})"


def format_spec(
    data: np.ndarray,
    spec: str,
    *,
    requires_grad: bool = False,
    grad_fn_name: str | None = None,
) -> str:
    """`f"{t:{spec}}"` / `format(t, spec)` as torch.Tensor.__format__ does it.

    A 0-d tensor formats its Python scalar (`.item()`), so any error is Python's own
    (e.g. ValueError for "d" on a float).  Any other tensor -- even with one element --
    falls back to object.__format__: str(t) for an empty spec, else a TypeError.
    """
    if data.ndim == 0:
        return format(data.item(), spec)
    if spec:
        raise TypeError("unsupported format string passed to Tensor.__format__")
    return format_tensor(data, requires_grad=requires_grad, grad_fn_name=grad_fn_name)


def format_tensor(
    data: np.ndarray,
    *,
    requires_grad: bool = False,
    grad_fn_name: str | None = None,
) -> str:
    """`str(t)` / `repr(t)` of a torch tensor holding `data`."""
    data = np.asarray(data)
    suffixes: list[str] = []
    if data.size == 0:
        # empty tensors show their shape (unless 1-d) and any non-float32 dtype, even int64
        body = "[]"
        if data.ndim != 1:
            suffixes.append("size=" + _shape_tuple(data.shape))
        if data.dtype != np.float32:
            suffixes.append("dtype=" + format_dtype(data.dtype))
    else:
        body = _format_body(data, len(_PREFIX), current().print_options)
        if data.dtype not in _IMPLICIT_DTYPES:
            suffixes.append("dtype=" + format_dtype(data.dtype))
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _join_suffixes(_PREFIX + body, suffixes, len(_PREFIX))


def _shape_tuple(shape: tuple[int, ...]) -> str:
    return str(tuple(int(n) for n in shape))


def _join_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    # torch keeps a running "last line length" that starts 2 larger than the true length of
    # the last line (an off-by-two in its bookkeeping) and becomes exact once a suffix
    # has been moved to its own line; reproduce that so the wrap points agree.
    parts = [text]
    running = len(text) - (text.rfind("\n") + 1) + 2
    linewidth = current().print_options.linewidth
    for suffix in suffixes:
        if running + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            running = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            running += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _format_body(data: np.ndarray, indent: int, options) -> str:
    """The bracketed element text, without the "tensor(" prefix or suffixes."""
    edge = options.edgeitems
    summarize = data.size > options.threshold
    # With summarization only the shown edge items exist as far as layout and the
    # width/mode choice are concerned, so cut them out once up front.
    cut = tuple(summarize and n > 2 * edge for n in data.shape)
    if any(cut):
        index = [
            np.r_[0:edge, n - edge:n] if c else np.arange(n)
            for n, c in zip(data.shape, cut)
        ]
        shown = data[np.ix_(*index)]
    else:
        shown = data
    cells = _format_cells(shown.reshape(-1), options)
    width = cells.width
    if data.ndim == 0:
        return cells.strings[0]
    strings = np.array(cells.strings, dtype=object).reshape(shown.shape)
    return _nested(strings, cut, indent, width, options)


def _nested(strings: np.ndarray, cut: tuple[bool, ...], indent: int, width: int, options) -> str:
    if strings.ndim == 1:
        items = list(strings)
        if cut[0]:
            items.insert(options.edgeitems, " ...")
        per_line = max(1, (options.linewidth - indent) // (width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [_nested(sub, cut[1:], indent + 1, width, options) for sub in strings]
    if cut[0]:
        rows.insert(options.edgeitems, "...")
    # sub-blocks are separated by (ndim - 1) newlines: blank lines between 2-d blocks etc.
    sep = "," + "\n" * (strings.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


class _Cells:
    __slots__ = ("strings", "width")

    def __init__(self, strings: list[str], width: int) -> None:
        self.strings = strings
        self.width = width


def _format_cells(flat: np.ndarray, options) -> _Cells:
    """Format the shown elements and right-align them to one common width.

    The width (which also decides how many elements fit on a line) comes from every
    shown element for ints/bools, but only from the finite non-zero ones for floats:
    torch ignores 0, nan and inf there, so "nan" or "-inf" may stick out of a column.
    """
    if flat.dtype.kind != "f":
        raw = [str(v) for v in flat.tolist()]  # bools give "True"/"False"
        width = max(len(s) for s in raw)
        return _Cells([s.rjust(width) for s in raw], width)

    values = flat.tolist()  # Python floats of the stored (e.g. float32) values
    finite_nz = np.isfinite(flat) & (flat != 0)
    shown = flat[finite_nz]
    integral, sci = _float_style(shown)
    if options.sci_mode is not None and shown.size:  # set_printoptions(sci_mode=...) decides,
        sci = options.sci_mode  # (except with no finite non-zero value: torch's early return)
    style = "sci" if sci else ("int" if integral else "fixed")
    precision = options.precision
    if style == "sci":
        raw = [f"{v:.{precision}e}" for v in values]
    elif style == "int":
        # integral floats print as "3." ; nan/inf keep their plain spelling
        raw = [f"{v:.0f}." if v - v == 0 else f"{v:.0f}" for v in values]
    else:
        raw = [f"{v:.{precision}f}" for v in values]
    width = 1
    for s, keep in zip(raw, finite_nz.tolist()):
        if keep and len(s) > width:
            width = len(s)
    return _Cells([s.rjust(width) for s in raw], width)


def _float_style(nonzero: np.ndarray) -> tuple[bool, bool]:
    """(every value integral, torch's automatic sci_mode) from the finite non-zero values."""
    if nonzero.size == 0:
        return True, False
    magnitude = np.abs(nonzero.astype(np.float64))
    big = float(magnitude.max())
    small = float(magnitude.min())
    spread = big / small > 1000.0 or big > 1.0e8
    if bool(np.all(np.ceil(nonzero) == nonzero)):
        return True, spread
    return False, spread or small < 1.0e-4


_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, float("inf"), 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """torch.set_printoptions for the rest of the run (a profile first, then the options
    given; sci_mode is always set, None meaning torch's automatic choice)."""
    options = current().print_options
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"unknown print profile {profile!r}")
        options.precision, options.threshold, options.edgeitems, options.linewidth = \
            _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise TypeError(f"set_printoptions(): {name} must be a number, not "
                                f"{type(value).__name__}")
            setattr(options, name, value)
    options.sci_mode = sci_mode
