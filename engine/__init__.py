"""The engine: PyTorch's tensors, autograd, nn and optim on NumPy, as a .tg program sees them.

Its rooms, each importing only the rooms before it (tests/test_import_graph.py checks the order):
core (the run's session, dtypes, devices, how things print, the "not supported" error),
numerics (float arithmetic in torch's order), numpy (NumPy as a program sees it),
random (torch's generator), graph (grad_fn nodes and the backward pass), ops (the op
registry and every op family), tensors (the Tensor and the functions that make one),
autograd (custom Functions, functional autograd, gradcheck), nn, optim, data; then api.py,
which assembles the `torch` a program imports.
"""
