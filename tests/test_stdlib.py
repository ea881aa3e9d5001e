"""The standard modules (interpreter/stdlib/): each program here runs under autodiff and under
CPython itself (this interpreter, a child process) and must print the same bytes; the names a
module has and autodiff lacks stop the program as not supported; sleep, exit and the bounds
behave as the modules' docstrings say."""

from __future__ import annotations

import io
import subprocess
import sys
import time

import pytest

from autodiff.interpreter import run_source
from autodiff.interpreter.reference import normalize_addresses

PROGRAMS = {
    "sys": "import sys\nprint(sys.argv, sys.maxsize, sys.platform, sys.version == sys.version)\n"
           "print(sys.version_info[:2], sys.version_info.major, sys.float_info.epsilon)\n"
           "print(sys.float_info.max, sys.byteorder, sys.getrecursionlimit())\n"
           "sys.setrecursionlimit(5000)\nprint(sys.getrecursionlimit())\n"
           "for bad in ['a', 1.5, 0, 10 ** 20]:\n    try:\n        sys.setrecursionlimit(bad)\n"
           "    except (TypeError, ValueError, OverflowError) as e:\n        print(type(e).__name__, e)\n"
           "print(sys.stdout.write('abc\\n'))\nsys.stdout.flush()\nprint(sys.stdout)\n"
           "try:\n    sys.stdout.write(1)\nexcept TypeError as e:\n    print(e)\n",
    "time": "import time\nfrom time import perf_counter\nt = time.time()\ns = perf_counter()\n"
            "time.sleep(0.02)\nprint(time.time() - t >= 0.01, perf_counter() - s >= 0.01)\n"
            "print(type(time.time()), type(time.perf_counter_ns()), time.monotonic() > 0)\n"
            "print(time.strftime('%Y', time.gmtime(0)), time.gmtime(0).tm_year, time.gmtime(0)[:3])\n"
            "for bad in [-1, 'a', float('nan'), 10 ** 20]:\n    try:\n        time.sleep(bad)\n"
            "    except (TypeError, ValueError, OverflowError) as e:\n        print(type(e).__name__, e)\n",
    "random": "import random\nrandom.seed(2024)\nprint(random.random(), random.randint(1, 6), random.randrange(10, 100, 3))\n"
              "xs = list(range(20))\nrandom.shuffle(xs)\nprint(xs, random.choice('abc'), random.sample(xs, 4))\n"
              "print(random.choices(range(5), weights=[1, 2, 3, 4, 5], k=6), random.uniform(-1, 1))\n"
              "print(random.gauss(0, 1), random.normalvariate(1, 2), random.expovariate(3))\n"
              "print(random.triangular(0, 1), random.betavariate(2, 3), random.gammavariate(2, 1))\n"
              "print(random.lognormvariate(0, 1), random.vonmisesvariate(1, 2), random.paretovariate(3))\n"
              "print(random.weibullvariate(1, 2), random.getrandbits(70))\n"
              "state = random.getstate()\na = random.random()\nrandom.setstate(state)\nprint(a == random.random())\n"
              "g = random.Random(7)\nprint(g.random(), g.randint(0, 9), random.Random(7).random() == random.Random(7).random())\n"
              "random.seed('text')\nprint(random.random())\nrandom.seed(3)\nprint(random.sample(range(10 ** 6), 3))\n"
              "try:\n    random.choice([])\nexcept IndexError as e:\n    print(e)\n"
              "try:\n    random.randint(5, 1)\nexcept ValueError as e:\n    print(e)\n",
    "collections": "from collections import OrderedDict, defaultdict, Counter, deque, namedtuple\n"
                   "d = defaultdict(list)\nfor w in 'apple bat apricot bee'.split():\n    d[w[0]].append(w)\n"
                   "print(d, dict(d), len(d), d['z'], sorted(d.keys()))\n"
                   "c = Counter('mississippi')\nprint(c, c.most_common(2), c['s'], c['q'], sorted(c.elements()))\n"
                   "c.update('ss')\nc.subtract({'i': 1})\nprint(c, c.total(), Counter(a=3) + Counter(a=1, b=2))\n"
                   "q = deque(range(5), maxlen=4)\nq.append(9)\nq.appendleft(-1)\nq.rotate(2)\n"
                   "print(q, q.maxlen, q.pop(), q.popleft(), list(q), len(q), 3 in q, q[0])\n"
                   "q.extend([7, 8])\nq.extendleft('ab')\nprint(q, deque([1, 2]) * 2, deque([1]) + deque([2]))\n"
                   "P = namedtuple('Point', ['x', 'y'], defaults=[0])\np = P(1)\n"
                   "print(p, p.x, p.y, p[0], p._asdict(), p._replace(x=5), P._fields, P, type(p), p == (1, 0))\n"
                   "x, y = p\nprint(x + y, isinstance(p, tuple), P._make([3, 4]))\n"
                   "o = OrderedDict(a=1)\no['b'] = 2\no.move_to_end('a')\nprint(o, list(o))\n",
    "itertools": "import itertools as it\nprint(list(it.islice(it.count(10, 2), 4)), it.count(3), it.repeat('x', 2))\n"
                 "print(list(it.repeat(0, 3)), list(it.chain('ab', [1])), list(it.chain.from_iterable(['ab', 'c'])))\n"
                 "print(list(it.product([1, 2], 'ab')), list(it.product(range(2), repeat=3))[:3])\n"
                 "print(list(it.permutations('abc')), list(it.combinations(range(4), 3)))\n"
                 "print(list(it.combinations_with_replacement('ab', 2)), list(it.accumulate([1, 2, 3, 4])))\n"
                 "print(list(it.accumulate([1, 2, 3], lambda a, b: a * b)), list(it.accumulate([[1], [2]])))\n"
                 "print(list(it.islice(it.cycle('ab'), 5)), list(it.zip_longest('abc', [1])))\n"
                 "print([(k, len(list(g))) for k, g in it.groupby(sorted('abracadabra'))])\n"
                 "print(list(it.starmap(pow, [(2, 3), (3, 2)])), list(it.takewhile(lambda x: x < 3, [1, 2, 5, 1])))\n"
                 "print(list(it.dropwhile(lambda x: x < 3, [1, 2, 5, 1])), list(it.filterfalse(None, [0, 1, 2])))\n"
                 "print(list(it.compress('abc', [1, 0, 1])), list(it.pairwise('abc')))\n"
                 "a, b = it.tee([1, 2])\nprint(list(a), list(b), sum(it.islice(it.count(), 100)))\n"
                 "for bad in [lambda: it.islice([1], -1), lambda: it.permutations([1], -1), lambda: it.repeat()]:\n"
                 "    try:\n        bad()\n    except (ValueError, TypeError) as e:\n        print(type(e).__name__, e)\n",
    "functools": "import functools\nfrom functools import reduce, partial, lru_cache, cache, wraps, cmp_to_key\n"
                 "print(reduce(lambda a, b: a + b, range(5)), reduce(lambda a, b: a * b, [], 1))\n"
                 "p = partial(pow, 2)\nprint(p(10), p.args, p.keywords)\n"
                 "@lru_cache(maxsize=None)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
                 "print(fib(80), fib.cache_info())\nfib.cache_clear()\nprint(fib.cache_info())\n"
                 "@cache\ndef sq(n):\n    return n * n\nprint(sq(4), sq(4), sq.cache_info().hits)\n"
                 "@lru_cache\ndef one(n):\n    return n\nprint(one(1))\n"
                 "def logged(f):\n    @wraps(f)\n    def inner(*args):\n        print('calling', f.__name__)\n"
                 "        return f(*args)\n    return inner\n"
                 "@logged\ndef add(a, b):\n    'adds'\n    return a + b\nprint(add(1, 2), add.__name__)\n"
                 "print(sorted([3, 1, 2], key=cmp_to_key(lambda a, b: b - a)))\n"
                 "try:\n    reduce(lambda a, b: a, [])\nexcept TypeError as e:\n    print(e)\n",
    "re": "import re\nprint(re.sub(r'(\\w+)@(\\w+)', r'\\2 at \\1', 'me@here you@there'), re.subn('a', 'b', 'aaa'))\n"
          "print(re.findall(r'\\d+', 'a1b22c333'), re.split(r'[,;]\\s*', 'a, b;c'), re.escape('a.b'))\n"
          "m = re.search(r'(?P<k>\\w+)=(?P<v>\\d+)', 'x: k=12')\n"
          "print(m.group('k'), m.group(2), m.groups(), m.groupdict(), m.span(), m.start(1), m.end())\n"
          "pat = re.compile(r'[aeiou]', re.IGNORECASE)\nprint(pat.findall('HEllo'), pat.sub('_', 'Audio'), pat.pattern)\n"
          "print(re.fullmatch(r'\\d+', '123') is not None, re.match('b', 'ab'), [x.group() for x in re.finditer('o', 'foo')])\n"
          "print(re.sub('x', lambda m: m.group().upper(), 'axbx'), bool(re.M & re.MULTILINE))\n"
          "try:\n    re.compile('(')\nexcept re.error as e:\n    print('error:', e)\n",
    "typing_copy_string_warnings": "from typing import List, Dict, Tuple, Optional, Union, Any, Callable\nimport typing\n"
          "import copy\nimport string\nimport warnings\n"
          "Vector = List[float]\nprint(Vector, Dict[str, int], Tuple[int, ...], Optional[int], Union[int, str], Any)\n"
          "print(Callable[[int], str], typing.Iterable[int], List[int] == List[int], typing.cast(int, 'x'))\n"
          "a = [[1, 2], {'k': [3]}]\nb = copy.deepcopy(a)\nb[0].append(9)\nc = copy.copy(a)\nc[1]['k'].append(4)\n"
          "print(a, b, c, c[0] is a[0], b[0] is a[0])\n"
          "print(string.ascii_letters, string.digits, string.punctuation, string.capwords('hi there'))\n"
          "warnings.filterwarnings('ignore')\nwarnings.warn('hidden')\nwarnings.resetwarnings()\n"
          "warnings.simplefilter('error')\ntry:\n    warnings.warn('now an error')\nexcept UserWarning as e:\n"
          "    print('caught', e)\n",
}


def _ours(source: str, filename: str = "prog.tg") -> tuple[str, str, object]:
    out, err = io.StringIO(), io.StringIO()
    result = run_source(source, filename, out=out, err=err)
    return out.getvalue(), err.getvalue(), result.error


def _cpython(source: str, tmp_path, filename: str = "prog.tg") -> tuple[str, str, int]:
    (tmp_path / filename).write_text(source, encoding="utf-8")
    done = subprocess.run([sys.executable, filename], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    return done.stdout, done.stderr, done.returncode


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_prints_what_cpython_prints(name, tmp_path):
    source = PROGRAMS[name]
    out, err, error = _ours(source)
    assert error is None, error.render(source)
    want, want_err, code = _cpython(source, tmp_path)
    assert code == 0, want_err
    assert normalize_addresses(out) == normalize_addresses(want)
    assert err == want_err.replace(f"{tmp_path}/", "")


def test_warnings_print_as_python_prints_them(tmp_path):
    source = ("import warnings\nwarnings.warn('careful')\nfor i in range(3):\n"
              "    warnings.warn('once here', DeprecationWarning)\nwarnings.warn('x', RuntimeWarning)\n")
    out, err, error = _ours(source)
    assert error is None
    want_out, want_err, _ = _cpython(source, tmp_path)
    # (CPython names the script by its full path there)
    assert (out, err) == (want_out, want_err.replace(f"{tmp_path}/", ""))
    assert err.count("prog.tg:4:") == 1


@pytest.mark.parametrize("use", [
    "import sys\nsys.path.append('..')", "import sys\nprint(sys.modules)",
    "from sys import path\nprint(path)", "import sys\nsys.settrace(None)", "import time\ntime.get_clock_info('time')",
    "import collections\ncollections.ChainMap()", "from functools import total_ordering\nprint(total_ordering)",
    "import functools\nfunctools.singledispatch(print)", "import itertools\nprint(itertools.batched)" if
    sys.version_info >= (3, 12) else "from random import SystemRandom\nSystemRandom()", "import re\nre.Scanner([])",
    "import warnings\nwarnings.catch_warnings()", "import string\nstring.Template('$a')",
    "import typing\ntyping.get_type_hints(print)", "import copy\nprint(copy.Error)",
    "import typing\ntyping.List['int']",
])
def test_the_rest_of_each_module_is_not_supported(use):
    out, err, error = _ours(use + "\n")
    assert error is not None, out
    assert error.error_class == "NotImplementedError" and "not supported by autodiff" in error.message


@pytest.mark.parametrize("use,error_class", [
    ("import sys\nsys.nothing", "AttributeError"), ("from itertools import nothing", "ImportError"),
    ("import re\nre.sbu('a', 'b', 'c')", "AttributeError")])
def test_a_misspelt_name_fails_as_in_python(use, error_class):
    _, _, error = _ours(use + "\n")
    assert error is not None and error.error_class == error_class


def test_argv_is_the_program_file():
    assert _ours("import sys\nprint(sys.argv)\n", "lesson.tg")[0] == "['lesson.tg']\n"


@pytest.mark.parametrize("call,code,message", [
    ("sys.exit()", None, ""), ("sys.exit(0)", None, ""), ("sys.exit(3)", 3, ""),
    ("sys.exit('bye')", 1, "bye"), ("sys.exit(True)", 1, "")])
def test_exit_ends_the_program_with_pythons_status(call, code, message, tmp_path):
    source = f"import sys\nprint('before')\n{call}\nprint('after')\n"
    out, _, error = _ours(source)
    assert out == "before\n"
    want_out, want_err, want_code = _cpython(source, tmp_path)
    assert want_out == out and want_code == (code or 0)
    if code is None:
        assert error is None
    else:
        assert error.exit_code == code and error.message == message
        assert want_err.strip() == message


def test_sleep_ends_at_the_deadline():
    start = time.monotonic()
    _, _, error = _ours_timeout("import time\ntime.sleep(60)\n", 0.5)
    assert error is not None and error.error_class == "TimeoutError"
    assert time.monotonic() - start < 5


def _ours_timeout(source: str, timeout: float):
    out, err = io.StringIO(), io.StringIO()
    result = run_source(source, "prog.tg", out=out, err=err, timeout=timeout)
    return out.getvalue(), err.getvalue(), result.error


@pytest.mark.parametrize("source", [
    "import itertools\nsum(itertools.count())", "import itertools\nlist(itertools.cycle(itertools.count()))",
    "import re\nre.match('(a+)+$', 'a' * 40 + 'b')"])
def test_endless_work_in_c_stops_at_the_deadline(source):
    start = time.monotonic()
    _, _, error = _ours_timeout(source + "\n", 0.5)
    assert error is not None and error.error_class in ("TimeoutError", "MemoryError")
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("source", [
    "import itertools\nitertools.product(range(3), repeat=10 ** 9)",
    "import itertools\nitertools.combinations(range(3), 10 ** 9)",
    "import collections\ncollections.deque([0] * 1000) * 10 ** 6",
    "import re\nre.sub('', 'abc' * 1000, 'x' * 10 ** 4)", "import random\nrandom.choices([1], k=10 ** 9)",
    "import random\nrandom.getrandbits(10 ** 9)"])
def test_sizes_past_the_bound_are_refused_first(source):
    _, _, error = _ours(source + "\n")
    assert error is not None and error.error_class in ("MemoryError", "OverflowError")


def test_each_run_has_its_own_generator_and_filters():
    first = _ours("import random\nrandom.seed(1)\nimport warnings\nwarnings.simplefilter('ignore')\n")
    assert first[2] is None
    a = _ours("import random\nprint(random.random())\n")[0]
    b = _ours("import random\nprint(random.random())\n")[0]
    assert a != b  # unseeded, as Python's
    assert "UserWarning" in _ours("import warnings\nwarnings.warn('shown again')\n")[1]


def test_copy_of_an_engine_object_is_not_supported():
    _, _, error = _ours("import copy\nt = torch.ones(2)\ncopy.deepcopy([t])\n")
    assert error is not None and "not supported by autodiff" in error.message
