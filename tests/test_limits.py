"""Programs that would exhaust the machine get clear errors instead."""

import io
import time

import pytest

from autodiff.engine.core.session import Session
from autodiff.text.diagnostics import EXIT_LIMIT
from autodiff.interpreter import run_source


def _error(source: str):
    result = run_source(source, "limits.tg", out=io.StringIO(), err=io.StringIO())
    assert result.error is not None, "the program should have been stopped"
    return result.error


@pytest.mark.parametrize("source", ["x = 10 ** 10 ** 10", "x = 2 ** 1000000", "x = 1 << 10**9",
                                    "x = (10 ** 20000) * (10 ** 20000)"])
def test_huge_integers_are_refused(source):
    error = _error(source)
    assert error.error_class == "OverflowError" and "digits" in error.message
    assert (error.line, error.col) == (1, 5)


@pytest.mark.parametrize("source", ["import math\nx = math.factorial(10**6)",
                                    "import math\nx = math.factorial(15000)",
                                    "import math\nx = math.comb(10**6, 5000)",
                                    "import math\nx = math.perm(10**7, 10**6)",
                                    "import random\nx = random.getrandbits(10**9)"])
def test_pythons_modules_refuse_huge_integers_before_computing_them(source):
    started = time.perf_counter()
    error = _error(source)
    assert error.error_class == "OverflowError" and "limit" in error.message
    assert time.perf_counter() - started < 1.0
    assert run_source(source.replace("10**6", "20").replace("10**7", "30").replace("10**9", "64")
                      .replace("15000", "20"),
                      "limits.tg", out=io.StringIO(), err=io.StringIO()).error is None


@pytest.mark.parametrize("source", ["import random\nx = random.choices([1], k=10**9)",
                                    "import random\nx = random.sample(range(10**10), 10**9)"])
def test_pythons_random_refuses_huge_samples(source):
    assert _error(source).error_class == "MemoryError"


@pytest.mark.parametrize("source", ["x = [0] * 10**9", "x = 'ab' * 10**9", "x = (1, 2) * 10**8"])
def test_huge_repetitions_are_refused(source):
    assert _error(source).error_class == "MemoryError"


def test_ordinary_arithmetic_is_untouched():
    out = io.StringIO()
    result = run_source("print(2 ** 64, 3 * 4, [1] * 3, 'a' * 2, 1 << 3, 2 ** -1)", "ok.tg", out=out)
    assert result.error is None
    assert out.getvalue() == "18446744073709551616 12 [1, 1, 1] aa 8 0.5\n"


@pytest.mark.parametrize("source", ["x = torch.ones(100000, 100000)",
                                    "x = torch.ones(100000, 1) + torch.ones(1, 100000)",
                                    "x = torch.zeros(60000, 3) @ torch.zeros(3, 60000)"])
def test_tensor_over_the_memory_limit_is_refused_before_allocating(source):
    with Session(max_bytes=10**9).active():
        error = _error(source)
    assert error.error_class == "MemoryError"
    assert "bytes" in error.message and "shape [" in error.message


HUGE_DATASET = ("from torch.utils.data import Dataset, DataLoader\n"
                "class Rows(Dataset):\n    def __len__(self):\n        return 2 * 10**8\n"
                "    def __getitem__(self, i):\n        return i\n")


def test_a_shuffled_loader_is_refused_at_once_as_randperm_is():
    """A shuffled DataLoader orders its rows by randperm (torch's RandomSampler): the order
    meets the one tensor-size check, before anything is drawn; in order, nothing is made."""
    with Session(max_bytes=100 << 20).active():
        started = time.monotonic()
        error = _error(HUGE_DATASET + "for batch in DataLoader(Rows(), shuffle=True):\n    pass\n")
        assert time.monotonic() - started < 1.0
        randperm = _error("x = torch.randperm(2 * 10**8)\n")
        out = io.StringIO()
        result = run_source(HUGE_DATASET + "for batch in DataLoader(Rows(), batch_size=2):\n"
                            "    print(batch)\n    break\n", "limits.tg", out=out)
    assert error.error_class == "MemoryError" and error.message == randperm.message
    assert "shape [200000000] (int64)" in error.message and error.line == 7
    assert result.error is None and out.getvalue() == "tensor([0, 1])\n"


@pytest.mark.parametrize("write", ["y **= big", "y.add_(big)", "y.clamp_(min=big)",
                                   "y.copy_(big)", "y.sin_()"])
def test_an_in_place_write_that_cannot_fit_computes_nothing(write):
    """torch checks the written-to tensor before computing: a 0-d tensor cannot take a
    20000 x 20000 result (1.6 GB, which NumPy would compute for seconds first), nor can an
    expand's view take a computed write."""
    source = ("y = torch.tensor(2.0)\nbig = torch.ones(1).expand(20000, 20000)\n"
              f"{'y = big' if 'sin' in write else ''}\n{write}\n")
    started = time.monotonic()
    with Session(max_bytes=4 * 10**9).active():  # (the result itself would be allowed)
        error = _error(source)
    assert time.monotonic() - started < 1.0
    assert error.error_class == "RuntimeError" and error.line == 4
    assert "broadcast shape [20000, 20000]" in error.message or \
        "refers to a single memory location" in error.message


@pytest.mark.parametrize("source,lines", [("x = 0\nwhile True:\n    x = x + 1\n", {2, 3}),
                                          ("def f(n):\n    return f(n) if n > 0 else 0\n"
                                           "for i in range(10**12):\n    y = i * 2\n", {3, 4})])
def test_timeout_stops_the_program_inside_its_loop(source, lines):
    result = run_source(source, "loop.tg", out=io.StringIO(), timeout=0.3)
    error = result.error
    assert error.error_class == "TimeoutError" and "0.3 s" in error.message
    assert error.line in lines and error.exit_code == EXIT_LIMIT


def test_a_run_does_not_leak_grad_mode_into_the_next():
    first = run_source("torch.set_grad_enabled(False)\n", "a.tg", out=io.StringIO())
    assert first.error is None
    out = io.StringIO()
    run_source("print(torch.is_grad_enabled())\n", "b.tg", out=out)
    assert out.getvalue() == "True\n"


def test_print_options_belong_to_one_run():
    """set_printoptions lasts for its own run only, as in a process of its own."""
    first = run_source("torch.set_printoptions(precision=1)\nprint(torch.tensor([1.25]))\n",
                       "a.tg", out=io.StringIO())
    assert first.error is None
    out = io.StringIO()
    run_source("print(torch.tensor([1.25]))\n", "b.tg", out=out)
    assert out.getvalue() == "tensor([1.2500])\n"


@pytest.mark.parametrize("source", [
    "x = f\"{'':>1000000000}\"", "x = f'{1.5:.100000000f}'", "x = '%*d' % (10**9, 1)",
    "x = '%1000000000d' % 1", "x = '%s%*s' % ('a', 10**8, 'b')", "x = '{:>1000000000}'.format(1)",
    "x = '{0}{0}'.format('a' * 6000000)", "s = 'a' * 10**7\nx = s + s", "s = 'a' * 10**7\ns += s",
    "s = 'a' * 6 * 10**6\nx = f'{s}{s}'", "l = [0] * 10**7\nl += l", "t = (0,) * 10**7\nt = t + t",
    "x = ''.join(['a' * 10**6] * 11)", "x = ('a' * 10**4).replace('', 'a' * 10**4)",
    "x = ('ab' * 10**6).replace('a', 'abcdefghijk')", "s = '%*d'\ns %= (10**9, 1)",
    # a width, or case: a string far longer than the one given
    "x = 'a'.ljust(5 * 10**7)", "x = 'a'.rjust(10**8, '-')", "x = 'a'.center(10**8)",
    "x = '1'.zfill(10**8)", "x = ('\u00df' * 9000000).upper()",
    # a list or tuple made from an iterable, known long or taken one past the bound
    "l = [1]\nfor i in range(30):\n    l.extend(l)", "l = []\nl.extend(range(10**9))",
    "l = []\nl += range(10**9)", "l = [0] * 10**6\nl *= 20", "x = list(range(10**9))",
    "x = tuple(range(10**9))", "x = sorted(range(10**9))", "x = sum([[0] * 10**6] * 11, [])",
    "def f(*a):\n    pass\nf(*range(10**9))",
    "l = [1] * 10**7\nl.append(1)\nx = list(filter(None, l))",
    "x = ''.join(s for s in ['a' * 10**6] * 11)",
    # the text of a list that holds one long string many times (or itself, nested)
    "x = str(['x' * 9000000] * 8)", "x = repr(['x' * 9000000] * 8)",
    "x = format(['x' * 9000000] * 8)", "print(['x' * 9000000] * 8)",
    "x = f\"{['x' * 9000000] * 8!r}\"", "x = f\"{['x' * 9000000] * 8}\"",
    "x = '{!r}'.format(['x' * 9000000] * 8)", "x = '{}'.format({'k': ('x' * 9000000,) * 2})",
    "s = 'x' * 9000000\nx = '%s%s' % (s, s)", "x = '%(a)r' % {'a': ['x' * 9000000] * 2}",
    "l = ['x' * 10**6]\nfor i in range(5):\n    l = [l, l]\nx = str(l)",
    "x = str(ValueError(['x' * 9000000] * 2))"])
def test_long_strings_and_lists_are_refused_whatever_makes_them(source):
    error = _error(source)
    assert error.error_class == "MemoryError" and "over the limit of 10,000,000" in error.message
    assert error.exit_code == EXIT_LIMIT


def test_bounded_producers_still_work_as_in_python():
    out = io.StringIO()
    source = ("print('%5d|%-3s|%%|%.2f|%*d' % (3, 'a', 1.5, 4, 7), '{:>5}|{:.3}'.format(1, "
              "'abcdef'), f'{2.5:08.3f}')\n"
              "print(', '.join(['a', 'b']), 'abcb'.replace('b', 'xx', 1), 'x'.replace('', '-'),"
              " [1] + [2], (1,) + (2,), 'a' + 'b')\n"
              "s = 'ab'\ns += 'c'\nl = [1]\nl += [2]\nprint(s, l, '%d%%' % 5)\n")
    result = run_source(source, "ok.tg", out=out)
    assert result.error is None, result.error
    assert out.getvalue() == ("    3|a  |%|1.50|   7     1|abc 0002.500\n"
                              "a, b axxcb -x- [1, 2] (1, 2) ab\nabc [1, 2] 5%\n")


@pytest.mark.parametrize("number", [0, 7, -123, 10**50, -(10**300)])
@pytest.mark.parametrize("ndigits", [None, 0, 2, -1, -3, -49, -50, -51, -400, -10**9])
def test_round_of_an_integer_is_pythons_without_the_huge_power(number, ndigits):
    out = io.StringIO()
    call = f"round({number})" if ndigits is None else f"round({number}, {ndigits})"
    assert run_source(f"print({call})\n", "r.tg", out=out).error is None
    expected = round(number) if ndigits is None else (
        round(number, ndigits) if ndigits > -1000 else 0)
    assert out.getvalue() == f"{expected}\n"


def test_expand_and_where_results_are_bounded():
    for source in ["x = torch.ones(1).expand(20000, 20000)",
                   "x = torch.where(torch.ones(20000, 1) > 0, torch.ones(1, 20000), 0.0)",
                   "x = torch.where(torch.ones(1, 20000) > 0, 1.0, torch.ones(20000, 1))"]:
        with Session(max_bytes=10**8).active():
            error = _error(source)
        assert error.error_class == "MemoryError" and "[20000, 20000]" in error.message


@pytest.mark.parametrize("source", [
    "g = range(3)\nfor i in range(5000):\n    g = map(abs, g)\nprint(sum(g))",
    "g = range(3)\nfor i in range(5000):\n    g = zip(g)\nprint(list(g))",
    "g = range(3)\nfor i in range(5000):\n    g = filter(None, enumerate(g))\nprint(list(g))",
    "g = range(3)\nfor i in range(50000):\n    g = (x for x in g)\nprint(sum(g))",
    "g = range(3)\nfor i in range(50000):\n    g = map(abs, (x for x in g))\nprint(sum(g))",
])
def test_deeply_nested_iterators_stop_before_the_c_stack_overflows(source):
    """CPython itself crashes taking an item from map(f, map(f, ...)) nested 100,000 deep."""
    error = _error(source)
    assert error.error_class == "RecursionError"


def test_nesting_a_few_iterators_is_untouched():
    out = io.StringIO()
    result = run_source("g = range(3)\nfor i in range(50):\n"
                        "    g = map(lambda t: t[0], (x for x in zip(g)))\n"
                        "print(type(g), sum(len(str(v)) for v in g))\n", "ok.tg", out=out)
    assert result.error is None and out.getvalue() == "<class 'map'> 3\n"
