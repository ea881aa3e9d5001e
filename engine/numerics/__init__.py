"""Float arithmetic in the order PyTorch's CPU kernels do it: fused multiply-add, sums added as
torch adds them, arange/linspace values, and the memory layouts torch's TensorIterator picks.
"""
