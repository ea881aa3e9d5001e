"""The Tensor (a NumPy array plus autograd's bookkeeping), its methods made from the op
registry, nn.Parameter, gradient hooks, and the functions that make tensors (torch.tensor,
zeros, arange, rand, ...).
"""
