"""What every other room of the engine stands on: the session (all state of one run), dtypes and
their promotion, devices, inference mode, how the engine's classes print as torch's, how a
tensor prints, the argument parser's messages, and the "not supported by autodiff" error.
"""
