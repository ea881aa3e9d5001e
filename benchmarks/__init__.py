"""Issue 5's benchmark suite: autodiff against PyTorch on the same .tg programs.

`python -m benchmarks --help` (or `python benchmarks/run.py`); see docs/performance.md.
"""
