"""torch.utils.data: TensorDataset and DataLoader, minibatches as tutorials draw them.
"""
