"""torch.nn: Module and how a program subclasses it, the built-in layers, activations,
convolutions and embeddings, nn.init and nn.utils.
"""
