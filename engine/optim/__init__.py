"""torch.optim: the optimisers, their parameter groups and state, and the learning-rate schedulers.
"""
