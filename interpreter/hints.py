"""Hints after a diagnostic: "did you mean" and a one-line fix for each classic mistake.

A diagnostic keeps PyTorch's exact `Class: message` line first; the hint block follows it
on stderr (never stdout), each line starting `hint: `. Hints are looked up here and only
here, keyed by error class and a pattern of the message, for every command that shows a
diagnostic. Every sentence goes through `_()` so a catalog can translate it.
`AUTODIFF_HINTS=0` turns hints off.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from autodiff.parser import ast
from . import source_hints, suggest
from autodiff.text.diagnostics import TgError
from autodiff.text.display import text_width
from autodiff.text.i18n import N_, _

PREFIX = N_("hint: ")


def enabled() -> bool:
    return os.environ.get("AUTODIFF_HINTS", "1").strip().lower() not in ("0", "no", "off", "false")


@dataclass
class Context:
    """What a rule may look at: the error, the program's text, its values when known."""

    error: TgError
    source: str | None
    scope: dict | None = None
    _tree: Any = field(default=None, repr=False)
    _parsed: bool = False

    @property
    def tree(self) -> ast.Module | None:
        if not self._parsed:
            self._parsed = True
            if self.source is not None:
                from autodiff.parser import parse

                try:
                    self._tree = parse(self.source, self.error.filename)
                except Exception:  # noqa: BLE001 - a hint is a bonus; a failed parse gives none
                    self._tree = None
        return self._tree

    def node(self) -> ast.Node | None:
        """The innermost node whose span is the error's (else the innermost that holds it)."""
        tree, e = self.tree, self.error
        if tree is None or e.line <= 0:
            return None
        exact, holding = None, None
        for node in ast.walk(tree):
            if isinstance(node, ast.Module):
                continue
            if (node.line, node.col, node.end_line, node.end_col) == \
                    (e.line, e.col, e.end_line, e.end_col):
                exact = node
            elif (node.line, node.col) <= (e.line, e.col) and \
                    (node.end_line, node.end_col) >= (e.end_line, e.end_col or e.col):
                if holding is None or _size(node) <= _size(holding):
                    holding = node
        return exact or holding

    def text(self, node: ast.Node | None) -> str | None:
        """The source text of `node` when it sits on one line."""
        if node is None or self.source is None or node.line != node.end_line or not node.end_col:
            return None
        lines = self.source.split("\n")
        if not 1 <= node.line <= len(lines):
            return None
        return lines[node.line - 1][node.col - 1: node.end_col - 1] or None


def _size(node: ast.Node) -> tuple:
    return (node.end_line - node.line, (node.end_col or 0) - node.col)


Rule = Callable[[re.Match, Context], Optional[str]]
_RULES: list[tuple[str, re.Pattern, Rule]] = []


def rule(error_class: str, pattern: str) -> Callable[[Rule], Rule]:
    """Register a hint for errors of `error_class` whose message matches `pattern`."""
    def register(fn: Rule) -> Rule:
        _RULES.append((error_class, re.compile(pattern, re.IGNORECASE | re.DOTALL), fn))
        return fn
    return register


def hints(error: TgError, source: str | None = None, scope: dict | None = None) -> list[str]:
    """The hints for `error`, each one sentence or two (no prefix)."""
    if not enabled():
        return []
    cx = Context(error, source, scope if scope is not None else getattr(error, "scope", None))
    found: list[str] = []
    for error_class, pattern, fn in _RULES:
        if error_class != error.error_class:
            continue
        match = pattern.search(error.message)
        if match is None:
            continue
        try:
            text = fn(match, cx)
        except Exception:  # noqa: BLE001 - a broken hint must never hide the diagnostic
            text = None
        if text and text not in found:
            found.append(text)
    return found


def block(lines: list[str]) -> str:
    """`hint: ` before each hint, continuation lines indented under its text."""
    prefix = _(PREFIX)
    pad = " " * text_width(prefix)
    return "".join(prefix + text.replace("\n", "\n" + pad) + "\n" for text in lines)


def hint_block(error: TgError, source: str | None = None, scope: dict | None = None) -> str:
    """The hint block to write after `error`'s diagnostic ('' when there is none)."""
    return block(hints(error, source, scope))


def warning_hint(category: str, message: str, lines: list[str], node: ast.Node | None) -> str:
    """The hint block after a warning the program triggered at `node` (the non-leaf `.grad`
    one); `lines` are the program's source lines."""
    if not enabled():
        return ""
    if category == "UserWarning" and "not a leaf Tensor is being accessed" in message:
        owner = _grad_owner(_node_text(lines, node)) or _("this tensor")
        return block([_("{t} is not a leaf (it was computed from other tensors), so backward() "
                        "does not keep its .grad and it reads None.\nCall {t}.retain_grad() "
                        "before backward() to keep it, or read the .grad of the leaf you created "
                        "with requires_grad=True.").format(t=owner)])
    return ""


def _node_text(lines: list[str], node: ast.Node | None) -> str | None:
    if node is None or node.line != node.end_line or not 1 <= node.line <= len(lines) or \
            not node.end_col:
        return None
    return lines[node.line - 1][node.col - 1: node.end_col - 1]


def _grad_owner(expression: str | None) -> str | None:
    if expression and expression.endswith(".grad"):
        return expression[: -len(".grad")]
    return None


def _did_you_mean(name: str | None) -> str | None:
    return _("Did you mean: '{name}'?").format(name=name) if name else None


# ---------------------------------------------------------------- did you mean

@rule("NameError", r"^name '(?P<name>[^']+)' is not defined")
def _name(m: re.Match, cx: Context) -> str | None:
    name = m["name"]
    names = suggest.bound_names(cx.tree) - {name}
    names |= suggest.builtin_names()
    if cx.scope:
        names |= {n for n in cx.scope if isinstance(n, str)}
    found = suggest.closest(name, names)
    if found:
        return _did_you_mean(found)
    if name in suggest.MISSING_IMPORTS:
        return _("'{name}' is bound by an import: add `{line}` at the top of the program.").format(
            name=name, line=suggest.MISSING_IMPORTS[name])
    return None


@rule("AttributeError", r"^module '(?P<module>[^']+)' has no attribute '(?P<name>[^']+)'")
def _module_attribute(m: re.Match, cx: Context) -> str | None:
    module, name = m["module"], m["name"]
    other = suggest.elsewhere(name, skip=module)  # the right name in the wrong namespace
    if other:
        return _("Did you mean: {other}.{name}? '{name}' is in {other}, not in {module}.").format(
            name=name, other=other, module=module)
    return _did_you_mean(suggest.closest(name, suggest.module_names(module)))


@rule("AttributeError", r"^'(?P<type>[^']+)' object has no attribute '(?P<name>[^']+)'")
def _object_attribute(m: re.Match, cx: Context) -> str | None:
    type_name, name = m["type"], m["name"]
    if type_name == "NoneType":
        return _none_grad(cx)
    return _did_you_mean(suggest.closest(name, suggest.class_names(type_name)))


@rule("TypeError", r"^(?P<func>[\w.]+)\(\) got an unexpected keyword argument '(?P<name>[^']+)'")
def _keyword(m: re.Match, cx: Context) -> str | None:
    function = suggest.callable_named(m["func"], cx.tree)
    names = suggest.keyword_names(function) if function is not None else set()
    return _did_you_mean(suggest.closest(m["name"], names or suggest.COMMON_KEYWORDS))


# ---------------------------------------------------------------- the classic mistakes

def _receiver(cx: Context, method: str) -> str | None:
    """`y` in `y.backward(...)` (or `y.add_(...)`) at the error."""
    node = cx.node()
    for candidate in ([node] + list(ast.walk(node)) if node is not None else []):
        if isinstance(candidate, ast.Call) and isinstance(candidate.func, ast.Attribute) and \
                (candidate.func.attr == method or method == "*"):
            return cx.text(candidate.func.value)
    return None


@rule("RuntimeError", r"grad can be implicitly created only for (real )?scalar outputs")
def _non_scalar(m: re.Match, cx: Context) -> str | None:
    node = cx.node()
    called = cx.text(node.func) if isinstance(node, ast.Call) else None
    if called and called.endswith("autograd.grad"):
        return _("torch.autograd.grad() of a non-scalar needs one gradient per output element: "
                 "pass grad_outputs=torch.ones_like(y), or differentiate y.sum().")
    y = _receiver(cx, "backward") or "y"
    return _("backward() with no argument needs a single-element (scalar) result. Sum it "
             "first, {y}.sum().backward(), or give the gradient of each element, "
             "{y}.backward(torch.ones_like({y})).").format(y=y)


@rule("RuntimeError", r"a leaf Variable that requires grad is being used in an in-place operation")
def _in_place_leaf(m: re.Match, cx: Context) -> str | None:
    node = cx.node()
    target = None
    if isinstance(node, ast.AugAssign):
        target = cx.text(node.target)
    elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
        target = cx.text(node.targets[0].value)
    target = target or _receiver(cx, "*") or "x"
    return _("{x} is a leaf that requires grad: autograd cannot record changing it in place. "
             "Update it inside `with torch.no_grad():` (as an optimiser step does), or make "
             "a new tensor instead ({x} = {x} + ...).").format(x=target)


@rule("RuntimeError", r"Trying to backward through the graph a second time")
def _backward_twice(m: re.Match, cx: Context) -> str | None:
    y = _receiver(cx, "backward") or "y"
    return _("The first backward() freed the graph. Call the first one as "
             "{y}.backward(retain_graph=True) to backward through it again, or compute {y} "
             "again before each backward().").format(y=y)


@rule("RuntimeError", r"only Tensors of floating point( and complex)? dtype can require gradients")
def _integer_requires_grad(m: re.Match, cx: Context) -> str | None:
    node = cx.node()
    call = cx.text(node) if isinstance(node, ast.Call) else None
    fixed = None
    if call and "requires_grad" in call:
        if "dtype=" in call:
            fixed = re.sub(r"dtype\s*=\s*[\w.]+", "dtype=torch.float", call, count=1)
        else:
            fixed = re.sub(r"requires_grad\s*=", "dtype=torch.float, requires_grad=", call, count=1)
    text = _("Gradients need floating-point values, and this tensor holds integers (write "
             "1. rather than 1, or pass dtype=torch.float).")
    if fixed and fixed != call:
        text += "\n" + _("For example: {fixed}").format(fixed=fixed)
    return text


def _dims(text: str) -> str:
    return "×".join(text.replace("x", " ").split())


def _operands(cx: Context) -> tuple[str, str]:
    node = cx.node()
    if isinstance(node, ast.BinOp):
        return cx.text(node.left) or _("the left operand"), cx.text(node.right) or _("the right operand")
    if isinstance(node, ast.Call) and len(node.args) >= 2 and not node.keywords:
        return cx.text(node.args[0]) or _("the first"), cx.text(node.args[1]) or _("the second")
    return _("the left operand"), _("the right operand")


@rule("RuntimeError", r"mat1 and mat2 shapes cannot be multiplied \((?P<a>\d+x\d+) and (?P<b>\d+x\d+)\)")
def _matmul_shapes(m: re.Match, cx: Context) -> str | None:
    (r1, c1), (r2, c2) = m["a"].split("x"), m["b"].split("x")
    node = cx.node()
    layer = isinstance(node, ast.Call) and not _is_product_call(cx, node)
    if layer:  # nn.Linear multiplies by its weight transposed: mat2 is in_features × out_features
        return _("The input's last size is {c1}, but the layer takes {r2} features "
                 "(nn.Linear(in_features={r2}, ...)): reshape the input or change in_features."
                 ).format(c1=c1, r2=r2)
    left, right = _operands(cx)
    text = _("{left} is {a} and {right} is {b} (as matrices): a matrix product needs the left's "
             "columns ({c1}) to equal the right's rows ({r2}).").format(
        left=left, right=right, a=_dims(m["a"]), b=_dims(m["b"]), c1=c1, r2=r2)
    if c2 == c1:
        text += "\n" + _("{right}.T is {c2}×{r2}: did you mean to transpose it?").format(
            right=right, c2=c2, r2=r2)
    return text


def _is_product_call(cx: Context, node: ast.Call) -> bool:
    called = cx.text(node.func) or ""
    return called.split(".")[-1] in ("mm", "matmul", "mv", "bmm", "dot", "addmm", "linear")


@rule("RuntimeError", r"size mismatch, got input \((?P<n>\d+)\), mat \((?P<mat>\d+x\d+)\), vec \((?P<v>\d+)\)")
def _matrix_vector(m: re.Match, cx: Context) -> str | None:
    left, right = _operands(cx)
    cols = m["mat"].split("x")[1]
    return _("{left} is {mat} and {right} has {v} elements: a matrix times a vector needs "
             "the matrix's columns ({cols}) to equal the vector's length.").format(
        left=left, right=right, mat=_dims(m["mat"]), v=m["v"], cols=cols)


@rule("RuntimeError", r"inconsistent tensor size, expected tensor \[(?P<a>\d+)\] and src \[(?P<b>\d+)\]")
def _vector_dot(m: re.Match, cx: Context) -> str | None:
    left, right = _operands(cx)
    return _("{left} has {a} elements and {right} has {b}: a dot product of two vectors needs "
             "equal lengths.").format(left=left, right=right, a=m["a"], b=m["b"])


@rule("RuntimeError", r"Expected size for first two dimensions of batch2 tensor to be: "
                      r"\[(?P<want>[\d, ]+)\] but got: \[(?P<got>[\d, ]+)\]")
def _batch_product(m: re.Match, cx: Context) -> str | None:
    left, right = _operands(cx)
    return _("A batched matrix product needs {right}'s first two sizes to be [{want}] (the "
             "batch size and {left}'s columns), but they are [{got}].").format(
        left=left, right=right, want=m["want"], got=m["got"])


@rule("RuntimeError", r"The size of tensor a \((?P<a>\d+)\) must match the size of tensor b "
                      r"\((?P<b>\d+)\) at non-singleton dimension (?P<d>\d+)")
def _broadcast(m: re.Match, cx: Context) -> str | None:
    left, right = _operands(cx)
    return _("Element-wise operations line shapes up from the last dimension; each pair of "
             "sizes must be equal or 1. Here {left} has {a} and {right} has {b} in that "
             "dimension.").format(left=left, right=right, a=m["a"], b=m["b"])


@rule("AttributeError", r"^'(?P<type>float|int|bool)' object has no attribute "
                        r"'(?P<name>backward|grad|grad_fn|requires_grad|retain_grad|is_leaf)'")
def _number_not_tensor(m: re.Match, cx: Context) -> str | None:
    node = cx.node()
    owner = cx.text(node.value) if isinstance(node, ast.Attribute) else None
    owner = owner or _receiver(cx, m["name"]) or _("this value")
    return _("{y} is a Python number ({type}), not a tensor, so autograd never saw how it was "
             "computed: it came from outside torch (math.sin, .item(), float(), ...). Compute "
             "it with torch's functions on tensors (torch.sin, torch.exp, ...).").format(
        y=owner, type=m["type"])


@rule("AssertionError", r"^Torch not compiled with CUDA enabled")
def _no_cuda(m: re.Match, cx: Context) -> str | None:
    return _("autodiff computes on the CPU, as a PyTorch without CUDA does. Leave out .cuda() "
             "and .to(\"cuda\"), or choose the device as tutorials do: device = \"cuda\" if "
             "torch.cuda.is_available() else \"cpu\".")


# ---------------------------------------------------------------- files

@rule("FileNotFoundError", r"No such file or directory")
def _no_host_files(m: re.Match, cx: Context) -> str | None:
    return _("Reading the computer's files is not supported by autodiff: a .tg program sees "
             "only the files it wrote itself in this run "
             "(open(..., \"w\"), torch.save, os.makedirs), kept in memory until it ends. "
             "Write the file earlier in the program, or make the data in it (torch.tensor([...])).")


@rule("NotImplementedError", r"^os\.[\w.]+ is not supported by autodiff")
def _host_system(m: re.Match, cx: Context) -> str | None:
    return _("A .tg program never reaches the host system: its os has the path and folder "
             "functions (on the run's own in-memory files) and an empty os.environ.")


# ---------------------------------------------------------------- .grad read as None

def _grad_expression(cx: Context) -> ast.Attribute | None:
    node = cx.node()
    for candidate in ast.walk(node) if node is not None else ():
        if isinstance(candidate, ast.Attribute) and candidate.attr == "grad":
            return candidate
    return None


def _none_grad(cx: Context) -> str | None:
    grad = _grad_expression(cx)
    if grad is None:
        return None
    owner = cx.text(grad.value) or "x"
    value = cx.scope.get(owner) if cx.scope and isinstance(grad.value, ast.Name) else None
    why = _grad_none_reason(owner, value)
    return _("{x}.grad is None. {why}").format(x=owner, why=why)


def _grad_none_reason(owner: str, value: Any) -> str:
    if value is not None and hasattr(value, "is_leaf") and hasattr(value, "requires_grad"):
        if not value.requires_grad:
            return _("{x} does not require grad: create it with requires_grad=True (or call "
                     "{x}.requires_grad_()) before using it.").format(x=owner)
        if not value.is_leaf:
            return _("{x} is not a leaf (it was computed from other tensors): call "
                     "{x}.retain_grad() before backward(), or read the leaf's .grad.").format(x=owner)
        return _("backward() has not reached {x}: it was not used to compute the tensor "
                 "backward() ran from, was cut off by detach() or torch.no_grad(), or "
                 "backward() has not run yet.").format(x=owner)
    return _("A .grad stays None unless {x} is a leaf created with requires_grad=True, was "
             "used (not detached) to compute the tensor backward() ran from, and backward() "
             "has run; a non-leaf needs {x}.retain_grad().").format(x=owner)


@rule("TypeError", r"unsupported operand type\(s\) for .*'NoneType'")
def _none_operand(m: re.Match, cx: Context) -> str | None:
    return _none_grad(cx)


@rule("TypeError", r"^'(?P<type>[^']+)' object is not callable")
def _attribute_called(m: re.Match, cx: Context) -> str | None:
    node = cx.node()
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args
            and not node.keywords):
        return None
    called = cx.text(node.func)
    return _("{attr} is a value ({type}), not a method: write {attr} without the ().").format(
        attr=called, type=m["type"]) if called else None


# ---------------------------------------------------------------- what autodiff lacks

@rule("NotImplementedError", r"not supported by autodiff")
@rule("SyntaxError", r"not supported by autodiff")
@rule("ImportError", r"not supported by autodiff")
@rule("AttributeError", r"not supported by autodiff")
def _unsupported(m: re.Match, cx: Context) -> str | None:
    if m.string.startswith("os."):  # (not PyTorch's: the host's, said by _host_system)
        return None
    return _("autodiff does not support this yet (Python or PyTorch has it): it is a limit of this tool, "
             "not a mistake in the program. docs/language.md (\"Not supported\") lists what .tg "
             "programs cannot use.")


for _class, _pattern, _fn in source_hints.RULES:  # the source file's own rules, tried last
    rule(_class, _pattern)(_fn)
