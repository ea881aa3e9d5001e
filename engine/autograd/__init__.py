"""What a program does with autograd beyond backward(): its own torch.autograd.Function,
torch.autograd.functional and torch.func, gradcheck; and the float64 central differences the
`check` command and the tests compare gradients with.
"""
