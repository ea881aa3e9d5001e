"""The suite's two tiers. `python -m pytest` (the README's line) runs the fast tier: every
behaviour at least once, in minutes on a fresh machine with or without torch. The slow tier
(`python -m pytest -m slow`, which CI runs after the fast one) holds the rest: the remaining
cases of the big matrices, the long hostile and timing runs, and the suites that start a
process per case. The two tiers together are the whole suite, each case in one of them."""

from __future__ import annotations

import pytest

slow = pytest.mark.slow


def sampled(cases, fast, ids=None):
    """`cases` as the values of one parameter: those for which `fast(index, case)` holds in
    the fast tier, the others marked slow, so the fast tier samples the space the two tiers
    enumerate."""
    return [pytest.param(case, marks=() if fast(i, case) else slow,
                         id=None if ids is None else ids(case))
            for i, case in enumerate(cases)]
