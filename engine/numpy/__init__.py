"""NumPy as a .tg program sees it: `import numpy as np` for data only, its arrays converted
to and from tensors as torch converts them.
"""
