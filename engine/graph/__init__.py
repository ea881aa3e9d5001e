"""The autograd graph: grad_fn nodes, how an op's result joins the graph, the backward pass,
and the entry points torch.autograd.backward and torch.autograd.grad.
"""
