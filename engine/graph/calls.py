"""torch.autograd.backward and torch.autograd.grad: checking what they are given, seeding the
backward pass (graph.run_backward), and telling watching tools (session observers)."""

from __future__ import annotations

import warnings

import numpy as np

from .nodes import edge_to, run_backward
from ..core.session import current

CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using autograd.grad "
    "when creating the graph to avoid this. If you have to use this function, make sure to reset "
    "the .grad fields of your parameters to None after use to break the cycle and avoid the leak.")


def _is_tensor(value) -> bool:
    return hasattr(type(value), "_wrap") and hasattr(value, "_grad_fn")


def _tensors(value) -> list:
    return [value] if _is_tensor(value) else list(value)


def backward(tensors, grad_tensors, retain_graph, create_graph, inputs, rules):
    """Gradients of `tensors` flow into the leaves' `.grad` (only into `inputs`' when given)."""
    tensors = _tensors(tensors)
    create_graph = bool(create_graph)
    if grad_tensors is not None and _is_tensor(grad_tensors):
        grad_tensors = [grad_tensors]
    targets = None if inputs is None else _input_nodes(inputs)
    observers = current().observers
    if observers.backward_started is not None:
        replaced = observers.backward_started(tensors, grad_tensors, create_graph, False)
        grad_tensors = grad_tensors if replaced is None else replaced
    ok = False
    try:
        roots, grads = _roots_and_grads(tensors, grad_tensors, create_graph)
        if create_graph:
            warnings.warn(CREATE_GRAPH_WARNING, UserWarning, stacklevel=3)
        run_backward(roots, grads, rules[create_graph], create_graph=create_graph,
                     retain_graph=create_graph if retain_graph is None else retain_graph,
                     inputs=targets)
        ok = True
    finally:
        if observers.backward_ended is not None:
            observers.backward_ended(ok)


def _input_nodes(inputs) -> set:
    """The nodes that `backward(inputs=...)` accumulates at; a non-leaf input retains its
    gradient, as torch makes it do."""
    inputs = [inputs] if _is_tensor(inputs) else list(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    nodes = set()
    for t in inputs:
        if not _is_tensor(t):
            raise RuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
        if t.grad_fn is not None or not t.requires_grad:
            t.retain_grad()  # (torch's own error for an input that cannot have a gradient)
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
            if not _is_tensor(g):
                g = type(t)._wrap(np.asarray(g, dtype=t.array.dtype))
            if g.array.shape != t.array.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {t.shape}.")
            g = g if create_graph else g.array
        roots.append(edge_to(t))
        grads.append(g)
    return roots, grads


def grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, rules):
    """The gradients of `outputs` with respect to `inputs`, returned, not accumulated."""
    outputs = _tensors(outputs)
    inputs = _tensors(inputs)
    create_graph = bool(create_graph)
    if grad_outputs is not None and _is_tensor(grad_outputs):
        grad_outputs = [grad_outputs]
    observers = current().observers
    if observers.backward_started is not None:  # watched, but its seeds are its own
        observers.backward_started(outputs, grad_outputs, create_graph, True)
    roots, grads = _roots_and_grads(outputs, grad_outputs, create_graph)
    targets = []
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        targets.append(edge_to(t))
    capture = {node: None for node, _ in targets}
    run_backward(roots, grads, rules[create_graph],
                 retain_graph=create_graph if retain_graph is None else retain_graph,
                 create_graph=create_graph, capture=capture)
    results = []
    for index, (node, nr) in enumerate(targets):
        g = capture[node]
        if type(g) is list:  # an output of a multi-output node
            g = g[nr]
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {index} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior.")
        results.append(g if g is None or _is_tensor(g) else type(inputs[index])._wrap(g))
    return tuple(results)
