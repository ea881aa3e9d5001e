"""The Python constructs of the v2 surface behave as CPython's: each program below prints
what CPython prints for the same text (object addresses aside) and stops with the same
`ErrorClass: message`. The programs use no torch, so CPython itself is the reference, run
here by `exec` (test code, never the tool's)."""

from __future__ import annotations

import contextlib
import io

import pytest

from autodiff.interpreter import run_source
from autodiff.interpreter.reference import normalize_addresses

PROGRAMS = {
    "closures": """
def counter(start):
    n = start
    def step(by=1):
        nonlocal n
        n += by
        return n
    return step
c = counter(10)
c(); c(5)
print(c(), c.__name__ if False else "step")
def outer():
    x = 1
    def middle():
        def inner():
            return x + 1
        return inner
    fs = middle()
    x = 41
    return fs()
print(outer())
total = 0
def add(v):
    global total
    total += v
add(3); add(4)
print(total)
def make_adders():
    return [lambda y, i=i: y + i for i in range(3)]
print([f(10) for f in make_adders()])
def late():
    fs = [lambda: i for i in range(3)]
    return [f() for f in fs]
print(late())
""",
    "bounded_builtins_and_methods": """
a = [1]
b = a
a *= 2
a += (3,)
a += range(2)
a.extend("xy")
a.extend(v for v in [7])
print(b, a is b, sorted(b, key=str), sorted([3, 1], reverse=True), sum([[1], [2]], [0]))
print(sum([(1,), (2,)], ()), sum([1.5, 2], start=1), sum([]), list(range(3)), list(), tuple("ab"))
print(str([1, "a", (2.5, None)]), repr({"k": [1]}), str(), str(2), repr("a'b"))
print(format([1]), format(3.14159, ".2f"), "%s|%r" % ([1], "q"), "%d%%" % 5)
print("%(k)s %(k)r" % {"k": [1, "z"]}, "{!r} {!s} {}".format("a", [2], (3,)), f"{[1, 'b']!r} {'c'!s:>3}")
print("a".ljust(3, "-"), "a".rjust(3), "a".center(5, "*"), "7".zfill(3), "ab".upper(), "AB".lower())
print("a b".title(), "ab".capitalize(), ", ".join(str(v) for v in range(3)), "-".join("abc"))
l = [1]
l.insert(0, l)
print(l, str(l), repr([l, l]), type(list), type([]) is list, type("") == str, type(()) in (list, tuple))
print(isinstance([], list), isinstance("", (list, str)), list, tuple, str, sorted, sum, repr, format)
print(list.__name__, type(sorted), sorted.__name__, list((1, 2)) == [1, 2], type(list("ab")))
def f(*args):
    return args
print(f(*range(3)), f(*"ab"), f(*[1], *(2,)), str(ValueError("bad", 1)), str(KeyError("k")))
for bad in (lambda: sorted(), lambda: sum(), lambda: repr(), lambda: format(), lambda: list(1),
            lambda: tuple(1, 2), lambda: str(1, 2, 3, 4), lambda: "a".ljust(), lambda: "a".upper(1),
            lambda: [].extend(), lambda: [].extend(1), lambda: sum(["a"], ""), lambda: f(*1)):
    try:
        bad()
    except TypeError as e:
        print(e)
""",
    "lambdas_and_builtins": """
square = lambda x: x * x
pairs = [(3, 'c'), (1, 'a'), (2, 'b')]
print(square(4), sorted(pairs, key=lambda p: p[1], reverse=True), (lambda *a, **k: (a, k))(1, z=2))
print(list(map(lambda a, b: a + b, [1, 2], [10, 20])), list(filter(lambda v: v % 2, range(7))))
print(max([3, 9, 2], key=lambda v: -v), min(['bb', 'a', 'ccc'], key=len), sum(x * x for x in range(4)))
print(any(v > 2 for v in [1, 5]), all([]), divmod(-7, 2), pow(2, 10), pow(3, 4, 5), abs(-2.5))
print(list(reversed([1, 2, 3])), round(2.675, 2), repr('a'), format(3.14159, '.2f'))
it = iter([1, 2])
print(next(it), next(it), next(it, 'done'))
print(type(1), type(1.0), type('s'), type([]), type(()), type({}), type(set()), type(None))
print(type(square), type(print), isinstance(3, (int, float)), type(3) is int, type(len))
print(dict(a=1, b=2), set([1, 1, 2]), dict(zip('ab', [1, 2])), sorted({3, 1, 2}))
print('%.3f and %d and %s' % (3.14159, 7, 'x'), '{:>5}|{:<4}|'.format('ab', 'c'))
print('a,b'.split(','), ' x '.strip(), 'ab'.upper().lower(), 'x'.join(['1', '2']))
print('3'.zfill(3), 'ab'.center(6, '*'), 'hello'.count('l'), 'hello'.find('l'), 'ab'.title())
print(square, (lambda: 0), sorted)
""",
    "comprehensions": """
xs = [1, 2, 3, 4]
print([x * 2 for x in xs if x % 2 == 0], {x % 3 for x in xs}, {x: x * x for x in xs if x > 2})
print([(i, j) for i in range(3) for j in range(i)], [[c for c in w] for w in ['ab', 'c']])
x = 'outer'
print([x for x in range(2)], x)
print(sum(v for v in xs), tuple(v + 1 for v in xs), list(v for v in xs if v > 1))
gen = (v * v for v in xs)
print(next(gen), next(gen), list(gen))
print(gen)
def f(n):
    scale = 10
    return [scale * i for i in range(n)], {k: scale for k in 'ab'}, (scale for _ in [1])
a, b, g = f(3)
print(a, b, list(g), g)
print([y for y in [y for y in range(3)]])
print({k: v for k, v in zip('abc', range(3))}.items())
print([lambda: 0 for _ in [1]][0])
""",
    "star_args": """
def f(a, b=2, *args, c, d=4, **kw):
    return a, b, args, c, d, kw
print(f(1, c=3))
print(f(1, 2, 3, 4, c=5, e=6))
print(f(*[1, 2, 3], **{'c': 0, 'z': 1}))
def g(*, key):
    return key
print(g(key=1))
def h(*names):
    return len(names), names
print(h(), h(*'abc'), h(*range(3), *[9]))
print(*[1, 2, 3], sep='-')
kwargs = {'sep': ':', 'end': '!\\n'}
print('a', 'b', **kwargs)
""",
    "dicts_and_sets": """
d = {'a': 1, 'b': 2}
d['c'] = 3
print(d, len(d), 'a' in d, list(d.keys()), list(d.values()), list(d.items()))
print(d.get('a'), d.get('z'), d.get('z', 0), d.pop('a'), d, d.setdefault('q', 9), d)
d.update({'b': 20}, e=5)
for k, v in d.items():
    print(k, v)
del d['b']
print(d, d.copy() == d, {})
s = {1, 2}
s.add(3)
s.discard(1)
print(s, s | {9}, s & {2, 5}, s - {2}, s.union([7]), len(s))
e = {}
e[(1, 2)] = 'tuple key'
print(e)
""",
    "try_except": """
def risky(kind):
    if kind == 0:
        return [1][3]
    if kind == 1:
        return {}['k']
    if kind == 2:
        return 1 / 0
    if kind == 3:
        raise ValueError('bad value')
    if kind == 4:
        assert kind < 0, 'kind too big'
    return 'fine'
for kind in range(6):
    try:
        result = risky(kind)
    except (IndexError, KeyError) as e:
        print('lookup', type(e), e, e.args)
    except ZeroDivisionError as e:
        print('zero', e)
    except Exception as e:
        print('other', repr(e))
    else:
        print('no error', result)
    finally:
        print('finally', kind)
def in_finally():
    for i in range(3):
        try:
            if i == 1:
                break
        finally:
            print('leaving', i)
    try:
        return 'from try'
    finally:
        print('finally runs before the return')
print(in_finally())
def overrides():
    try:
        return 1
    finally:
        return 2
print(overrides())
try:
    try:
        raise KeyError('inner')
    except KeyError:
        raise
except KeyError as e:
    print('re-raised', e)
try:
    raise TypeError
except TypeError as e:
    print('class raised:', repr(e))
try:
    try:
        1 / 0
    except ZeroDivisionError as e:
        raise RuntimeError('wrapped') from e
except RuntimeError as e:
    print(e)
try:
    next(iter([]))
except StopIteration:
    print('stop')
try:
    pass
except ValueError:
    print('never')
print('after')
""",
    "deletion": """
x = 1
del x
items = [1, 2, 3, 4]
del items[0]
del items[-1:]
print(items)
a, b = 1, 2
del a, b
def f():
    y = 1
    del y
    return 'deleted'
print(f())
""",
    "decorators": """
def shout(fn):
    def wrapper(*args, **kwargs):
        return str(fn(*args, **kwargs)).upper()
    return wrapper
def twice(fn):
    return lambda *a: fn(*a) * 2
@shout
@twice
def greet(name):
    return 'hi ' + name
print(greet('ann'))
def tag(label):
    def decorate(fn):
        def inner(x):
            return label + ':' + str(fn(x))
        return inner
    return decorate
@tag('sq')
def sq(x):
    return x * x
print(sq(3), sq)
""",
    "attribute_builtins_id_slice_and_class": """
class Point:
    def __init__(self, x):
        self.x = x
    def norm(self):
        return abs(self.x)
p = Point(-3)
setattr(p, "y", 4)
for name in ["x", "y", "z", "norm"]:
    print(name, hasattr(p, name), getattr(p, name, None) is not None)
print(getattr(p, "norm")(), getattr(p, "y"), getattr([1, 2], "count")(2), getattr(p, "z", "none"))
try:
    getattr(p, "z")
except AttributeError as e:
    print("AttributeError:", e)
for call in [lambda: getattr(p), lambda: getattr(p, 1), lambda: getattr(p, "x", 1, 2),
             lambda: hasattr(p), lambda: hasattr(p, None), lambda: setattr(p, "x"),
             lambda: setattr(p, 2, 3), lambda: getattr(p, "x", default=1)]:
    try:
        call()
    except TypeError as e:
        print("TypeError:", e)
print(id(p) == id(p), id(p) == id(Point(1)), type(id(p)), id(None) == id(None))
s = slice(1, None, 2)
items = list(range(8))
print(s, slice(3), slice(1, 2), slice(None), s.start, s.stop, s.step, items[s], items[slice(-3, None)])
print(s == slice(1, None, 2), s.indices(8), "abcdef"[slice(None, None, -2)], type(s))
items[slice(0, 2)] = ["a", "b"]
print(items, (1, 2, 3)[slice(1, 3)])
print(p.__class__, p.__class__ is Point, (1).__class__, "s".__class__, [].__class__ is list,
      None.__class__, p.__class__.__name__, p.__class__(5).x, Point.__class__)
print(print, len, type, pow, super, staticmethod, classmethod, property, getattr, setattr,
      hasattr, id, slice, repr, sorted, str, list, tuple, type(print), type(len) is type(print))
""",
}

NUMPY_PROGRAMS = {
    "numpy_data": """
import numpy as np
np.random.seed(3)
print(np.random.rand(2, 3), np.random.randn(4), np.random.normal(1.0, 0.5, size=(2, 2)))
print(np.random.randint(0, 10, size=5), np.random.uniform(-1, 1, 3), np.random.random(2))
x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]])
print(x, repr(x), x.shape, x.dtype, x.ndim, x.size, x.T)
print(x.sum(), x.sum(axis=0), x.mean(axis=1), x.max(), x.argmax(), x.std(), x.reshape(3, 2))
print(x * 2 - 1, x / 3, x ** 2, -x, abs(-x), x @ x.T, 1 / x, x > 3, x[x > 3])
print(x[0], x[1, 2], x[:, 1:], x[-1], len(x), [row.sum() for row in x], 4.0 in x)
y = x.copy()
y[0, 0] = 100
y += 1
print(y, x[0, 0], y.astype(np.int64), y.astype(np.float32).dtype, y.tolist())
print(np.arange(5), np.arange(0, 1, 0.2), np.linspace(0, 2, 5), np.zeros((2, 2)), np.ones(3))
print(np.eye(2), np.full((2,), 7.5), np.zeros_like(x), np.pi, np.e, np.float32(0.1), np.float64)
print(np.exp(np.array([0.0, 1.0])), np.log(np.e), np.sqrt(np.array([4.0, 9.0])), np.sin(0.0))
print(np.dot(np.ones(3), np.arange(3)), np.matmul(x, x.T), np.concatenate([x, x]), np.stack([x[0], x[1]]))
print(np.maximum(x, 3), np.clip(x, 2, 5), np.where(x > 2, x, 0), np.allclose(x, x + 1e-9))
print(np.sum(x), np.mean(x), np.max(x, axis=1), np.argmax(x, axis=0), np.square(3), np.abs(-2))
print(np.unique(np.array([3, 1, 3])), np.sort(np.array([2, 1])), np.cumsum(np.arange(4)))
print(type(x), type(x.sum()), x.sum().item(), np.float32(1.5) * 2, np.arange(3)[np.newaxis])
a = np.ones(3)
b = a
b *= 2
print(a, np.add(a, 1), np.multiply(a, a), np.vstack([a, a]).shape, np.hstack([a, a]).shape)
""",
}

ERRORS = {
    "missing_positional": "def f(a, b, c):\n    pass\nf()\n",
    "too_many_with_kwonly": "def f(a, b=1, *, c, d):\n    pass\nf(1, 2, 3, c=1)\n",
    "missing_kwonly": "def f(a, *, c, d):\n    pass\nf(1)\n",
    "unexpected_keyword": "def f(a):\n    pass\nf(1, b=2)\n",
    "multiple_values": "def f(a):\n    pass\nf(1, a=2)\n",
    "too_many": "def f(a):\n    pass\nf(1, 2)\n",
    "too_many_defaults": "def f(a, b=1):\n    pass\nf(1, 2, 3)\n",
    "lambda_missing": "(lambda x: x)()\n",
    "star_not_iterable": "def f(*a):\n    pass\nf(*1)\n",
    "dstar_not_mapping": "def f(**k):\n    pass\nf(**1)\n",
    "dstar_repeated": "def f(**k):\n    pass\nf(a=1, **{'a': 2})\n",
    "keywords_not_strings": "def f(**k):\n    pass\nf(**{1: 2})\n",
    "uncaught_value_error": "raise ValueError('no good')\n",
    "uncaught_key_error": "d = {}\nd['missing']\n",
    "bare_raise_outside": "raise\n",
    "raise_non_exception": "raise 5\n",
    "except_non_class": "try:\n    1 / 0\nexcept 3:\n    pass\n",
    "name_after_except": "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    pass\nprint(e)\n",
    "error_in_handler": "try:\n    1 / 0\nexcept ZeroDivisionError:\n    [][0]\n",
    "del_unbound": "del nothing\n",
    "del_local_unbound": "def f():\n    del y\n    y = 1\nf()\n",
    "unbound_free": "def f():\n    def g():\n        return v\n    r = g()\n    v = 1\n    return r\nf()\n",
    "comprehension_no_leak": "[q for q in range(3)]\nprint(q)\n",
    "genexp_error_when_consumed": "g = (1 / v for v in [1, 0])\nprint(next(g))\nprint(next(g))\n",
    "not_iterable_in_comprehension": "[v for v in 5]\n",
    "unhashable_set": "{[1]}\n",
    "dict_pop_missing": "{}.pop('k')\n",
    "assert_message": "assert 1 > 2, 'one is not more than two'\n",
    "getattr_missing": "class A:\n    pass\ngetattr(A(), 'x')\n",
    "getattr_name_not_a_string": "getattr([], 1)\n",
    "setattr_on_a_list": "setattr([], 'x', 1)\n",
    "slice_unhashable": "{slice(1): 2}\n",
}


NUMPY_ERRORS = {
    "numpy_shape_mismatch": "import numpy as np\nnp.ones(2) + np.ones(3)\n",
    "numpy_truth_value": "import numpy as np\nif np.ones(2):\n    pass\n",
    "numpy_index": "import numpy as np\nnp.ones(2)[5]\n",
    "numpy_reshape": "import numpy as np\nnp.ones(4).reshape(3, 2)\n",
}

# generator functions: lazy (the prints of a generator and its consumer interleave), with
# every statement a yield can sit in, delegation, early exits, closures and recursion
GENERATOR_PROGRAMS = {
    "generator_is_lazy": """
def numbers(n):
    print("start")
    for i in range(n):
        print("make", i)
        yield i * i
    print("done")
g = numbers(3)
print("made")
for v in g:
    print("got", v)
print(list(g), type(g), type(g).__name__)
print(g)
""",
    "generator_while_if_return": """
def collatz(n):
    while True:
        yield n
        if n == 1:
            return
        elif n % 2:
            n = 3 * n + 1
        else:
            n //= 2
    yield "never"
print(list(collatz(6)), max(collatz(7)), len(list(collatz(1))))
""",
    "generator_delegates": """
def leaves(tree):
    if isinstance(tree, list):
        for branch in tree:
            yield from leaves(branch)
    else:
        yield tree
def both():
    yield from leaves([1, [2, [3, 4]], 5])
    yield from "ab"
    yield from (x * 10 for x in range(2))
    yield
print(list(both()))
""",
    "generator_consumers": """
def pairs(n):
    k = 0
    while k < n:
        yield k, str(k)
        k += 1
print(dict(pairs(3)), sorted(pairs(2), reverse=True), sum(a for a, _ in pairs(4)))
print([b for _, b in pairs(3)], list(zip(pairs(2), pairs(5))), list(enumerate(pairs(2))))
print(any(a > 2 for a, _ in pairs(5)), next(pairs(9)), list(map(len, pairs(2))))
it = pairs(2)
print(next(it), next(it), next(it, "end"), iter(it) is it)
""",
    "generator_closes_over_its_scope": """
def counter(step):
    total = 0
    def advance():
        nonlocal total
        while True:
            total += step
            yield total
    return advance
tick = counter(5)()
print(next(tick), next(tick), next(tick))
def early(n):
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            if (i + j) % 2:
                continue
            yield i, j
print(list(early(4)))
""",
    "generator_consumer_stops_early": """
def forever():
    n = 0
    while True:
        n += 1
        yield n
for v in forever():
    if v > 3:
        break
    print(v)
squares = (v * v for v in forever())
print(next(squares), next(squares))
""",
    "generator_return_value": """
def g():
    yield 1
    return 5
def bare():
    yield 1
    return
def none():
    yield 1
    return None
def pair():
    yield 1
    if True:
        return (1, 2)
def ends():
    yield 1
for f in (g, bare, none, pair, ends):
    it = f()
    next(it)
    try:
        next(it)
    except StopIteration as e:
        print(e.args, e.value, e, repr(e))
print(list(g()), [v for v in pair()])
""",
}
GENERATOR_ERRORS = {
    "next_of_an_exhausted_generator": "def g():\n    yield 1\nit = g()\nnext(it)\nnext(it)\n",
    "next_after_a_generator_returned": "def g():\n    yield 1\n    return 5\nit = g()\nnext(it)\nnext(it)\n",
    "error_inside_a_generator": "def g(x):\n    yield 1 / x\nprint(list(g(0)))\n",
    "generator_already_executing": "def g():\n    yield next(it)\nit = g()\nnext(it)\n",
    "yield_from_a_number": "def g():\n    yield from 3\nlist(g())\n",
    "generator_is_not_subscriptable": "def g():\n    yield 1\ng()[0]\n",
    "generator_has_no_len": "def g():\n    yield 1\nlen(g())\n",
    "stop_iteration_leaving_a_generator": "def g():\n    yield 1\n    next(iter([]))\nlist(g())\n",
}
# plain classes (`class A:`, `class A(object):`): attributes, methods, inheritance, super(),
# and the special methods Python's machinery calls; list and tuple methods beside them
CLASS_PROGRAMS = {
    "plain_class_with_special_methods": """
class Stack:
    def __init__(self, *items):
        self.items = list(items)
    def push(self, item):
        self.items.append(item)
        return self
    def __len__(self):
        return len(self.items)
    def __getitem__(self, i):
        return self.items[i]
    def __setitem__(self, i, v):
        self.items[i] = v
    def __contains__(self, v):
        return v in self.items
    def __iter__(self):
        return iter(self.items[::-1])
    def __call__(self, k=1):
        return self.items[-k:]
    def __repr__(self):
        return "Stack(" + repr(self.items) + ")"
s = Stack(1, 2).push(3)
s[0] = 10
print(len(s), s[0], s[-1], 3 in s, 4 in s, list(s), s(), s(k=2), s, [s], str(s))
print(bool(s), bool(Stack()), type(s), type(s).__name__, isinstance(s, Stack), s.items)
""",
    "plain_class_inheritance": """
class Base(object):
    def __init__(self, name):
        super().__init__()
        self.name = name
    def hello(self):
        return "hello " + self.name
    def __str__(self):
        return "<" + self.name + ">"
class Child(Base):
    def __init__(self):
        super(Child, self).__init__("child")
        self.extra = 1
    def hello(self):
        return super().hello() + "!"
c = Child()
print(c.hello(), c.name, c.extra, str(c), isinstance(c, Base), isinstance(Base("b"), Child))
c.extra += 2
c.name = c.name.upper()
print(c.extra, c, Base("x").hello())
""",
    "class_attributes": """
class Settings:
    \"\"\"Training settings.\"\"\"
    lr = 0.05
    epochs = steps = 3
    names = ["a", "b"]
    twice = lambda self, v: 2 * v
    def summary(self):
        return f"{self.lr} {self.epochs} {self.steps} {self.names}"
s = Settings()
print(Settings.lr, s.summary(), s.twice(4), Settings.names is s.names)
s.lr = 1.0
s.names.append("c")
print(s.lr, Settings.lr, Settings().summary())
class Child(Settings):
    lr = 0.5
print(Child().summary(), Child.epochs)
""",
    "iteration_through_getitem": """
class Squares:
    def __getitem__(self, i):
        if i >= 3:
            raise IndexError("past the end")
        return i * i
print(list(Squares()), 4 in Squares(), 5 in Squares(), [v + 1 for v in Squares()])
for v in Squares():
    print(v)
try:
    Squares()[5]
except IndexError as e:
    print("caught", e)
class Words:
    def __init__(self):
        self.words = ["a", "b"]
    def __getitem__(self, i):
        return self.words[i]
print(list(Words()), list(enumerate(Words())))
""",
    "list_and_tuple_methods": """
xs = [3, 1, 2]
xs.extend([5, 4])
xs.insert(0, 9)
xs.remove(1)
print(xs, xs.index(5), xs.count(2))
xs.sort()
ys = xs.copy()
xs.reverse()
print(xs, ys)
xs.sort(key=lambda v: -v % 3, reverse=True)
print(xs)
xs.clear()
t = (1, 2, 2, 3)
print(xs, t.index(2), t.count(2))
""",
}
CLASS_ERRORS = {
    "len_of_a_plain_object": "class A:\n    pass\nlen(A())\n",
    "subscript_of_a_plain_object": "class A:\n    pass\nA()[0]\n",
    "missing_attribute": "class A:\n    pass\nA().x\n",
    "missing_init_argument": "class A:\n    def __init__(self, x):\n        self.x = x\nA()\n",
    "negative_len": "class A:\n    def __len__(self):\n        return -1\nlen(A())\n",
    "repr_not_a_string": "class A:\n    def __repr__(self):\n        return 1\nrepr(A())\n",
    "object_init_takes_no_argument":
        "class A:\n    def __init__(self):\n        super().__init__(1)\nA()\n",
    "error_inside_getitem": "class A:\n    def __getitem__(self, i):\n        return [1][i]\nA()[3]\n",
    "key_error_inside_getitem": "class A:\n    def __getitem__(self, k):\n        return {}[k]\nlist(A())\n",
    "list_remove_missing": "xs = [1]\nxs.remove(2)\n",
    "tuple_index_missing": "(1, 2).index(3)\n",
}
ERRORS.update(NUMPY_ERRORS)
ERRORS.update(GENERATOR_ERRORS)
ERRORS.update(CLASS_ERRORS)
PROGRAMS.update(CLASS_PROGRAMS)
PROGRAMS.update(NUMPY_PROGRAMS)
PROGRAMS.update(GENERATOR_PROGRAMS)


def cpython(source: str) -> tuple[str, str | None]:
    """What CPython prints and the last line of its traceback."""
    out = io.StringIO()
    try:
        code = compile(source, "<program>", "exec")
        with contextlib.redirect_stdout(out):
            exec(code, {"__name__": "__main__"})
    except Exception as exc:
        message = repr(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        return out.getvalue(), f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return out.getvalue(), None


def autodiff(source: str) -> tuple[str, str | None]:
    out = io.StringIO()
    result = run_source(source, "program.tg", out=out, err=io.StringIO())
    error = result.error
    if error is None:
        return out.getvalue(), None
    return out.getvalue(), f"{error.error_class}: {error.message}" if error.message else error.error_class


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_prints_what_cpython_prints(name):
    source = PROGRAMS[name].lstrip("\n")
    expected_out, expected_error = cpython(source)
    assert expected_error is None, expected_error  # the programs themselves run
    out, error = autodiff(source)
    assert error is None, error
    assert normalize_addresses(out) == normalize_addresses(expected_out)


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_is_cpythons(name):
    source = ERRORS[name]
    expected = cpython(source)
    assert expected[1] is not None
    assert autodiff(source) == expected


@pytest.mark.parametrize("source,message", [
    ("yield 1\n", "'yield' outside function"),
    ("x = 2\nif x:\n    yield from [x]\n", "'yield' outside function"),
    ("def g():\n    x = yield 1\n", "'yield' inside an expression is not supported by autodiff"),
    ("def g():\n    print((yield))\n", "'yield' inside an expression is not supported by autodiff"),
])
def test_a_yield_outside_a_function_or_inside_an_expression_is_a_syntax_error(source, message):
    result = run_source(source, "program.tg", out=io.StringIO(), err=io.StringIO())
    assert result.error.error_class == "SyntaxError"
    assert result.error.message.startswith(message)
    assert result.error.render(source).startswith("program.tg:")


def test_a_yield_inside_try_runs_as_cpythons():
    source = ("def g():\n    yield 0\n    try:\n        yield 1\n        1 / 0\n"
              "    except ZeroDivisionError:\n        yield 2\n    finally:\n        print('f')\n"
              "print(list(g()))\n")
    assert autodiff(source) == cpython(source)


def test_a_generator_that_delegates_to_itself_stops_as_python_recursion_does():
    source = "def g():\n    yield from g()\nlist(g())\n"
    result = run_source(source, "program.tg", out=io.StringIO(), err=io.StringIO())
    assert result.error.error_class == "RecursionError"
    assert result.error.line == 2
