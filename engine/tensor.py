"""The Tensor: a NumPy array plus the autograd bookkeeping PyTorch keeps beside it.

Every op result is made by `record`, the single place that decides whether a
graph node is created. Op forwards and backward rules live in ops.py.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import dtypes
from .autograd import (BackwardObserver, GradMode, MultiNode, Node, accumulate_node,
                       run_backward)
from .printing import format_size, format_spec, format_tensor


class Size(tuple):
    """torch.Size: a tuple of ints that prints as `torch.Size([2, 3])`."""

    _tg_public = frozenset({"numel", "index", "count"})

    def __repr__(self) -> str:
        return format_size(self)

    __str__ = __repr__

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n


# A 0-d tensor keeps its value as a NumPy scalar: scalar arithmetic is ~10x faster than
# on 0-d arrays. It becomes a 0-d array (`storage`) once something must share or write it.
_NUMPY_SCALARS = frozenset({np.float32, np.float64, np.int64, np.int32, np.bool_})


class Tensor:
    __slots__ = ("array", "requires_grad", "grad_fn", "_grad", "_vc", "_base", "_accumulator",
                 "_retains_grad", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("use torch.tensor(...) to create a tensor")

    @classmethod
    def _wrap(cls, data, grad_fn=None, requires_grad=False) -> "Tensor":
        """The one constructor: `data` must already be a NumPy value of a supported dtype."""
        t = object.__new__(cls)
        if type(data) is np.ndarray:
            if not data.shape:
                data = data[()]
        elif type(data) not in _NUMPY_SCALARS:
            data = np.asarray(data)
            if not data.shape:
                data = data[()]
        t.array = data
        t.grad_fn = grad_fn
        t.requires_grad = requires_grad or grad_fn is not None
        t._grad = None
        t._vc = None  # version counter [n], shared with views; None until first needed
        t._base = None  # the tensor this one is a view of
        t._accumulator = None
        t._retains_grad = False
        return t

    # --- attributes -----------------------------------------------------------------
    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.of_array(self.array)

    @property
    def shape(self) -> Size:
        return Size(self.array.shape)

    @property
    def ndim(self) -> int:
        return self.array.ndim

    @property
    def _version(self) -> int:
        return self._vc[0] if self._vc is not None else 0

    def _bump_version(self) -> None:
        if self._vc is None:
            self._vc = [1]
        else:
            self._vc[0] += 1

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if type(value) is not Tensor:
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.array.shape != self.array.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size")
        self._grad = value

    def storage(self) -> np.ndarray:
        """The writable array behind this tensor (a 0-d value becomes a 0-d array)."""
        array = self.array
        if type(array) is not np.ndarray:
            array = self.array = np.array(array)
        return array

    @property
    def data(self) -> "Tensor":
        """A detached tensor sharing this one's storage: changes to it bypass autograd."""
        return _alias(self.storage())

    @data.setter
    def data(self, value: "Tensor") -> None:
        self.array = value.array

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def T(self) -> "Tensor":
        return ops.permute(self, tuple(range(self.array.ndim - 1, -1, -1)))

    def size(self, dim=None):
        return Size(self.array.shape) if dim is None else self.array.shape[dim]

    def dim(self) -> int:
        return self.array.ndim

    def numel(self) -> int:
        return int(self.array.size)

    def item(self):
        if self.array.size != 1:
            raise RuntimeError(
                f"a Tensor with {self.array.size} elements cannot be converted to Scalar")
        return self.array.reshape(()).item()

    def tolist(self):
        return self.array.tolist()

    def __len__(self) -> int:
        if self.array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.array.shape[0]

    def __iter__(self):
        if self.array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(ops.unbind(self, 0))  # torch iterates through unbind: one shared node

    def __bool__(self) -> bool:
        if self.array.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.array.reshape(()))

    def _python_scalar(self):
        if self.array.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.array.reshape(()).item()

    def __float__(self) -> float:
        return float(self._python_scalar())

    def __int__(self) -> int:
        return int(self._python_scalar())

    def __index__(self) -> int:
        if self.array.dtype.kind not in "iu" or self.array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        name = self.grad_fn.op.name if self.grad_fn is not None else None
        return format_tensor(self.array, requires_grad=self.requires_grad, grad_fn_name=name)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        name = self.grad_fn.op.name if self.grad_fn is not None else None
        return format_spec(self.array, spec, requires_grad=self.requires_grad, grad_fn_name=name)

    # --- autograd ---------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        backward([self], None if gradient is None else [gradient],
                 retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    def detach(self) -> "Tensor":
        # same storage and version counter, but not an autograd view: in place is allowed
        detached = _alias(self.storage())
        if self._vc is None:
            self._vc = [0]
        detached._vc = self._vc
        return detached

    def detach_(self) -> "Tensor":
        self.grad_fn = None
        self.requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and self.array.dtype.kind not in "f":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self) -> None:
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        node = self.grad_fn
        if node is not None and not self._retains_grad:
            self._retains_grad = True
            if type(node) is MultiNode:
                node.retained = node.retained or {}
                node.retained[node.output_nr(self)] = self
            else:
                node.retained = self

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def zero_(self) -> "Tensor":
        return ops.zero_(self)

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If "
    "you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. "
    "See github.com/pytorch/pytorch/pull/30531 for more information.")


CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using autograd.grad "
    "when creating the graph to avoid this. If you have to use this function, make sure to reset "
    "the .grad fields of your parameters to None after use to break the cycle and avoid the leak.")


def _alias(array: np.ndarray) -> Tensor:
    """A tensor over the very same array (no 0-d scalar conversion)."""
    t = Tensor._wrap(array)
    t.array = array
    return t


def share_storage(view: Tensor, base: Tensor) -> Tensor:
    """Mark `view` as a view of `base`: one version counter, as torch's views share."""
    if base._vc is None:
        base._vc = [0]
    view._vc = base._vc
    view._base = base if base._base is None else base._base
    return view


_NO_EDGE = (None, 0)  # an input that needs no gradient, as next_functions shows it


def record(op, out_data, inputs, params=None) -> Tensor:
    """Wrap an op's result; when grad mode is on and an input requires grad, add a node.

    `inputs` holds Tensors and Python scalars in the op's argument order; scalars
    appear in `next_functions` as `(None, 0)`, as torch shows them.
    """
    out = Tensor._wrap(out_data)
    if GradMode.enabled:
        for t in inputs:
            if type(t) is Tensor and t.requires_grad:
                _attach_node(out, op, inputs, params)
                break
    if op.views:
        share_storage(out, inputs[0])
        # torch: a view made under no_grad still says requires_grad (as a leaf)
        if not GradMode.enabled and inputs[0].requires_grad:
            out.requires_grad = True
    return out


def _attach_node(out: Tensor, op, inputs, params, node_class=Node) -> None:
    edges = []
    meta = []
    for t in inputs:  # one loop, not two comprehensions: this runs for every recorded op
        if type(t) is Tensor:
            array = t.array
            meta.append((array.shape, array.dtype))
            edges.append(edge_to(t) if t.requires_grad else _NO_EDGE)
        else:
            meta.append(None)
            edges.append(_NO_EDGE)
    saved = versions = None
    if op.saves_inputs:
        saved = inputs
        for t in inputs:
            if type(t) is Tensor and t._vc is not None:  # None everywhere means "all at 0"
                versions = tuple([t._version if type(t) is Tensor else 0 for t in inputs])
                break
    node = out.grad_fn = node_class(op, tuple(edges), saved, versions, None, params, tuple(meta))
    if op.saves_out:
        # the output's own counter: changing it in place must fail the backward, as in torch
        out._vc = [0]
        node.out = out.array
        node.out_version = out._vc
    out.requires_grad = True


def edge_to(t: Tensor) -> tuple:
    """(node, output number) through which a gradient reaches `t`, as next_functions shows."""
    node = t.grad_fn
    if node is None:
        return accumulate_node(t), 0
    return (node, node.output_nr(t)) if type(node) is MultiNode else (node, 0)


def record_outputs(op, arrays, inputs, params=None) -> tuple:
    """`record` for an op with several outputs that share one node (unbind)."""
    outs = tuple(Tensor._wrap(a) for a in arrays)
    if outs and GradMode.enabled and any(type(t) is Tensor and t.requires_grad for t in inputs):
        _attach_node(outs[0], op, inputs, params, MultiNode)
        node = outs[0].grad_fn
        node.output_numbers = {id(t): i for i, t in enumerate(outs)}
        node.n_outputs = len(outs)
        for t in outs:
            t.grad_fn = node
            t.requires_grad = True
    if op.views:
        for t in outs:
            share_storage(t, inputs[0])
            if not GradMode.enabled and inputs[0].requires_grad:
                t.requires_grad = True
    return outs


def sum_to(g, shape):
    """Sum a broadcast gradient back to an input's shape (the one place that unbroadcasts)."""
    lead = g.ndim - len(shape)
    kept = () if 1 not in shape else \
        tuple(i + lead for i, n in enumerate(shape) if n == 1 and g.shape[i + lead] != 1)
    if type(g) is Tensor:
        axes = tuple(range(lead)) + kept
        return ops.sum(g, dim=axes, keepdim=True).reshape(shape) if axes else g.reshape(shape)
    if lead:
        g = np.add.reduce(g, axis=tuple(range(lead)))  # the usual case: a bias's leading dims
    if kept:
        g = np.add.reduce(g, axis=tuple(k - lead for k in kept), keepdims=True)
    return g if g.shape == shape else g.reshape(shape)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """torch.autograd.backward: gradients of `tensors` flow into the leaves' `.grad` (only
    into `inputs`' when given)."""
    tensors = [tensors] if type(tensors) is Tensor else list(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    if type(grad_tensors) is Tensor:
        grad_tensors = [grad_tensors]
    targets = None if inputs is None else _input_nodes(inputs)
    started, finished = BackwardObserver.started, BackwardObserver.finished
    if started is not None:
        replaced = started(tensors, grad_tensors, create_graph, False)
        grad_tensors = grad_tensors if replaced is None else replaced
    ok = False
    try:
        roots, grads = _roots_and_grads(tensors, grad_tensors, create_graph)
        if create_graph:
            warnings.warn(CREATE_GRAPH_WARNING, UserWarning, stacklevel=2)
        run_backward(roots, grads, create_graph=create_graph,
                     retain_graph=create_graph if retain_graph is None else retain_graph,
                     inputs=targets)
        ok = True
    finally:
        if finished is not None:
            finished(ok)


def _input_nodes(inputs) -> set:
    """The nodes that `backward(inputs=...)` accumulates at; a non-leaf input retains its
    gradient, as torch makes it do."""
    inputs = [inputs] if type(inputs) is Tensor else list(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    nodes = set()
    for t in inputs:
        if type(t) is not Tensor:
            raise RuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
        if t.grad_fn is not None:
            t.retain_grad()
        elif not t.requires_grad:
            t.retain_grad()  # torch's own error for an input that cannot have a gradient
        nodes.add(edge_to(t)[0])
    return nodes


def _roots_and_grads(tensors, grad_tensors, create_graph):
    roots, grads = [], []
    for i, t in enumerate(tensors):
        if not t.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn")
        g = None if grad_tensors is None else grad_tensors[i]
        if g is None:
            if t.array.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            array = t.array  # the seed: a 0-d value is kept as a NumPy scalar, as data is
            g = array.dtype.type(1) if not array.shape else np.ones(array.shape, array.dtype)
        else:
            if type(g) is not Tensor:
                g = Tensor._wrap(np.asarray(g, dtype=t.array.dtype))
            if g.array.shape != t.array.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {t.shape}.")
            g = g if create_graph else g.array
        roots.append(edge_to(t))
        grads.append(g)
    return roots, grads


from . import ops  # noqa: E402  (ops needs Tensor defined)
