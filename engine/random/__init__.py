"""PyTorch's CPU random number generator, value for value: the generator's state and draws,
and the float arithmetic of its kernels. The ops that draw into tensors are ops/random.py;
the creation functions (rand, randn, randint, ...) tensors/random_creation.py.
"""
