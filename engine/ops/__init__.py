"""The op registry and every op family: one registry entry per op, carrying its forward,
derivative rules, saved inputs, explain text and check domain, from which the op's whole
surface (function, method, in-place variant, keyword names) is made. `ops/operands.py` is what
every op does with its arguments first (type promotion, broadcasting).
"""
