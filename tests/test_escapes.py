"""The escape suite: every attempt to reach host Python from a .tg program is refused.

Each entry runs against the real engine; it must stop with a clear diagnostic (no
traceback of ours), and none may leave a trace on the machine.
"""

import io
from pathlib import Path

import pytest

from autodiff.interpreter import run_source

T = "t = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (t * t).sum()\n"

DUNDER_CHAINS = [
    "t.__class__.__dict__", "t.__class__.__mro__", "t.__dict__", "t.__init__.__globals__",
    "y.grad_fn.__class__.__mro__", "y.grad_fn.__init__", "y.grad_fn.next_functions[0][0].__class__.__subclasses__()",
    "y.grad_fn.next_functions[0][0].variable.__class__", "t.dtype.__class__.__bases__", "t.shape.__class__.__init__",
    "t.backward.__func__", "t.backward.__globals__", "t.sum.__self__", "torch.__dict__",
    "torch.tensor.__globals__", "torch.autograd.__dict__", "torch.Tensor.__subclasses__",
    "torch.Tensor.__mro__", "torch.nn.__class__.__base__", "math.__dict__", "math.sqrt.__self__",
    "print.__self__", "len.__module__", "range(3).__class__.__new__", "range.__subclasses__",
    "[].__class__.__base__", "().__class__.__getattribute__", "''.__class__.__mro__", "'a'.join.__self__",
    "(1).__class__.__reduce__", "(1.5).__class__.__module__", "True.__class__.__qualname__", "None.__class__.__call__",
    "f.__globals__", "f.__code__", "f.__closure__", "f.__builtins__", "f.__defaults__",
    "isinstance.__self__", "str.__dict__", "list.__dict__", "t._grad", "t.array",
    "y.grad_fn.op", "y.grad_fn.saved", "y.grad_fn.params", "t.dtype.np", "t.own_array",
    "str.format", "t.__reduce__", "t.__reduce_ex__(2)", "t.__getattribute__('array')",
    "torch.Tensor._wrap", "torch.tensor.__code__", "(t.sum).__func__",
]
FORBIDDEN_NAMES = ["getattr(t, 'array')", "setattr(t, 'x', 1)", "eval('1')", "exec('x = 1')",
                   "compile('1', 'f', 'eval')", "open('x.txt', opener=print)", "__import__('os')",
                   "globals()", "vars()", "locals()", "type(t).__dict__", "dir(t)", "input()",
                   "breakpoint()", "help()", "memoryview(b'x')", "object()", "super()",
                   "__builtins__", "exit()", "quit()", "delattr(t, 'grad')", "getattr(t, '_grad')",
                   "classmethod(len).__func__", "staticmethod(len)", "property(print).fget",
                   "property(print).__get__(1)", "property(print).setter(print).fset",
                   "setattr(t, '__class__', int)", "getattr(t, '__dict__')", "getattr(t, 'tg_type_name')",
                   "setattr(torch, 'ones', print)", "getattr(t.__class__, '__subclasses__')()"]
IMPORTS = ["import os\nos.system('ls')", "import sys\nprint(sys.modules)", "import subprocess",
           "import numpy.ctypeslib", "import torch.utils.hipify", "import builtins",
           "from os import system\nsystem('ls')",
           "from torch import _C", "import importlib", "import torch.nn.functional.os",
           "import math as os\nimport os\nos.popen('ls')", "from torch import save\nsave(print, 'x.pt')",
           "from numpy import fromfile\nfromfile('x')",
           "from torch.utils import checkpoint\ncheckpoint.checkpoint",
           "from math import __loader__", "from torch import *", "from numpy import *",
           "import numpy.random as r\nr.state.get_state()",
           "def g():\n    from math import *\n", "from torch.optim import SGD\nSGD(1).__init__"]
FORMAT_STRINGS = ["'{0.__class__}'.format(t)", "'{0.grad_fn.__init__}'.format(y)",
                  "'{0[0].__class__}'.format([t])", "'{x.__class__}'.format(x=t)",
                  "f'{t.__class__.__dict__}'", "f'{y.grad_fn.__class__.__mro__}'",
                  "f'{t.array}'", "'{0.array}'.format(t)"]
TORCH_IO = ["torch.load(print)", "torch.save(t, print)", "torch.from_numpy(t)",
            "torch.utils.checkpoint", "torch.ops", "torch.numpy()", "torch.hub",
            "torch.compile(f)", "torch.jit"]
# the v2 constructs: lambdas, comprehensions, dicts and sets, * and ** arguments, try/except,
# raise, del, global/nonlocal, type(), decorators, grad-mode decorators, NumPy
LAMBDAS = ["(lambda: 0).__code__", "(lambda: 0).__globals__", "(lambda x=t: x).__defaults__",
           "(lambda: t)().__class__.__module__", "f(lambda: 0).__closure__"]
COMPREHENSIONS = ["[x.__class__.__qualname__ for x in [1]]", "(x for x in [1]).gi_frame",
                  "(x for x in [1]).gi_code", "next(x.__dict__ for x in [t])",
                  "{k: k.__class__.__call__ for k in [1]}", "{x.__mro__ for x in [int]}",
                  "(x for x in [1]).send", "[y for y in (x for x in [1]).gi_frame.f_globals]"]
DICTS_AND_SETS = ["{}.__class__.__dict__", "{'a': 1}.items().__class__.__mro__", "{}.fromkeys([1])",
                  "{1}.__class__.__subclasses__()", "{'a': t}['a'].__dict__", "{}.__getitem__",
                  "dict.__subclasses__()", "{1: 2}.keys().mapping"]
CALLS = ["f(*t.__class__.__mro__)", "print(**{'file': 1})", "f(**{'a': t.__class__.__subclasses__()})",
         "max(*[t], key=lambda x: x.__class__)", "sorted([t], key=lambda x: x._vc)"]
TRY_EXCEPT = ["1 / 0\nexcept ZeroDivisionError as e:\n    print(e.__traceback__)",
              "1 / 0\nexcept ZeroDivisionError as e:\n    print(e.with_traceback)",
              "1 / 0\nexcept ZeroDivisionError as e:\n    print(e.__class__.__subclasses__())",
              "t.array\nexcept AttributeError:\n    print('caught a refusal')",
              "t.__class__.__bases__\nexcept Exception:\n    print('caught a refusal')",
              "torch.optim.LBFGS([t])\nexcept Exception:\n    print('caught an unsupported name')",
              "torch.zeros(10 ** 12)\nexcept MemoryError:\n    print('caught the memory limit')",
              "raise SystemExit\nexcept NameError:\n    raise",
              "1 / 0\nexcept ZeroDivisionError as e:\n    print(e.args.__class__.__init__)"]
RAISES = ["raise SystemExit(0)", "raise KeyboardInterrupt", "raise GeneratorExit",
          "raise t.__class__", "raise ValueError.__base__"]
DELETIONS = ["del t.grad", "del torch.tensor", "del math.pi", "del t.__class__", "del print",
             "del f.__code__"]
SCOPES = ["def g():\n    global __builtins__\n    return __builtins__\nprint(g())",
          "def g():\n    x = 1\n    def h():\n        nonlocal x\n        return x.__class__.__base__\n"
          "    return h()\nprint(g())",
          "global open\nopen('x.txt', 'w').fileno()"]
TYPES = ["type(t).__mro__", "type(1).__subclasses__()", "type('X', (), {})",
         "type(type(1))('X', (), {})", "type(t)._wrap", "type(y.grad_fn)(1)", "type(type(t)).cls",
         "type(f).__code__", "type(t.grad_fn).__init__", "type(math).__dict__",
         "type(y.grad_fn).op"]
DECORATORS = ["@print.__self__\ndef g():\n    pass", "@staticmethod\ndef g():\n    pass",
              "@property\ndef g():\n    pass\nprint(g.fget)",
              "@classmethod\ndef g():\n    pass\nprint(g.__func__)",
              "@torch.no_grad()\ndef g():\n    return 1\nprint(g.__wrapped__)",
              "@torch.no_grad\ndef g():\n    return 1\nprint(g.__closure__)",
              "torch.inference_mode().__enter__", "torch.no_grad.__new__"]
NUMPY = ["np.ones(2).tofile('x.bin')", "np.ones(2).dump('x.pkl')", "np.ones(2).ctypes",
         "np.ones(2).data", "np.ones(2).base", "np.ones(2).__array_interface__",
         "np.ones(2)._array", "np.save('x.npy', np.ones(2))", "np.load('x.npy')",
         "np.fromfile('x')", "np.frombuffer('x')", "np.ones(2).dtype.type",
         "np.float32(1).tofile('x.bin')", "np.ones(2).sum().tofile('x.bin')",
         "np.array([print])", "np.array(['a'])", "np.random.state", "np.random.seed.__self__",
         "t.detach().numpy().tofile('x.bin')", "np.memmap('x.bin')", "np.lib", "np.ctypeslib",
         "np.ones(2).view(np.int64)", "np.zeros(10 ** 12)", "np.ones(2).__array__()",
         "np.ones((2 ** 20, 1)) * np.ones((1, 2 ** 20))", "np.savetxt('x.txt', [1])",
         "np.ones(2).tobytes()", "np.random.RandomState", "np.asarray(np.ones(2)).setflags"]
# random numbers: the Generator object, torch.nn.init and the functions behind them
DATA = ["from torch.utils import data\ndata.DataLoader(data.TensorDataset(t), 1)._shuffle",
        "from torch.utils import data\niter(data.DataLoader(data.TensorDataset(t), 1))._loader",
        "from torch.utils import data\niter(data.DataLoader(data.TensorDataset(t), 1)).__next__",
        "from torch.utils import data\ndata.TensorDataset(t).__dict__",
        "from torch.utils import data\ndata.DataLoader.__init__.__globals__",
        "from torch.utils import data\ndata.DataLoader(data.TensorDataset(t), 1).dataset.__class__.__subclasses__()",
        "from torch.utils.data import Dataset\nDataset().__getitem__",
        "import torch.utils.cpp_extension",
        "from torch.utils.data import DataLoader\nDataLoader([t], 1).__iter__",
        "from torch.utils.data import DataLoader\nDataLoader.__mro__",
        "torch.utils.data.DataLoader(torch.utils.data.TensorDataset(t), 1, collate_fn=print)",
        "torch.utils.data.TensorDataset(t).tensors.__class__.__bases__", "torch.utils.__dict__"]
RANDOM = ["import random\nrandom.seed.__globals__", "import random\nrandom.shuffle.__closure__",
          "import random\nrandom.random.__self__", "import random\nrandom.__dict__",
          "import random\nrandom._inst", "from random import _inst", "import random\nrandom.seed = print",
          "import random\nrandom.Random().gauss_next", "from random import SystemRandom\nSystemRandom()",
          "import random\nrandom.choices([1], k=10**9)", "math.factorial.__wrapped__",
          "torch.manual_seed(0).__class__.__mro__", "torch.manual_seed(0)._stream",
          "torch.manual_seed(0)._words(3)", "torch.Generator()._next_normal",
          "torch.Generator().__init__", "torch.Generator.__dict__", "torch.Generator.__mro__",
          "torch.Generator().manual_seed.__self__", "torch.nn.init.__dict__",
          "torch.nn.init._fans", "torch.nn.init.math", "torch.nn.init.uniform_.__globals__",
          "torch.rand.__globals__", "torch.nn.functional.dropout.__code__",
          "torch.randn(2).normal_.__func__", "import torch.nn.init.os",
          "g = torch.Generator()\ng._seed = 1", "g = torch.Generator()\ng.initial_seed = len",
          "torch.nn.init.uniform_ = print"]
# nn, optim, autograd.Function, functional autograd, hooks: the classes and the objects they make
# __name__ reads a class's, function's or module's name (a str) and nothing else
NAMES = ["t.__name__", "'a'.__name__", "f.__name__.__class__.__init__", "type(t).__name__.__class__.__base__",
         "[].__name__", "y.grad_fn.__name__", "torch.__name__.__class__.__new__", "(1).__name__",
         "f.__name__.__globals__"]
# collections is importable for OrderedDict alone: nothing else of the module, no dunder of
# the class or its instances, no class attribute (fromkeys builds from any iterable)
COLLECTIONS = ["import collections\nprint(collections.__dict__)",
               "import collections\nprint(collections.abc)",
               "from collections import OrderedDict\nprint(OrderedDict.__init__)",
               "from collections import OrderedDict\nprint(OrderedDict().__class__.__base__)",
               "from collections import OrderedDict\nprint(OrderedDict.fromkeys([1]))",
               "from collections import OrderedDict\nprint(OrderedDict()._OrderedDict__map)",
               "from collections import OrderedDict\nprint(OrderedDict().__reduce__())",
               "from collections import defaultdict\nprint(defaultdict(list).__missing__)",
               "import collections\nprint(collections.namedtuple('P', 'x').__new__.__globals__)",
               "import collections\nprint(collections._collections_abc)",
               "from collections import OrderedDict\nprint(OrderedDict(a=print.__self__))"]
NN = ["torch.nn.Linear(2, 1).__dict__", "torch.nn.Linear(2, 1).__class__.__module__",
      "torch.nn.Linear(2, 1)._parameters.__class__.__qualname__", "torch.nn.Linear(2, 1)._modules.__init__",
      "torch.nn.Linear(2, 1)._parameters['weight'].__dict__", "torch.nn.Linear(2, 1)._forward_hooks",
      "torch.nn.Linear(2, 1)._buffers.fromkeys", "torch.nn.Linear(2, 1)._non_persistent",
      "torch.nn.Sequential(torch.nn.ReLU())._modules['0'].__class__.__call__",
      "torch.nn.Linear(2, 1).weight.__class__.__dict__", "torch.nn.Linear(2, 1).forward.__func__",
      "torch.nn.Linear(2, 1).forward.__globals__", "torch.nn.Linear.__subclasses__",
      "torch.nn.Module.__subclasses__()", "torch.nn.Linear.__mro__", "torch.nn.Linear.__base__",
      "torch.nn.Module.tg_subclass", "torch.nn.Module.tg_subclass('X', {})",
      "torch.nn.Module.tg_super_init", "torch.nn.Linear(2, 1)._tg_readable",
      "torch.nn.Sequential(torch.nn.ReLU())[0].__dict__", "torch.nn.Sequential()._forget",
      "torch.nn.Linear(2, 1).parameters().gi_frame", "torch.nn.Linear(2, 1).parameters().send",
      "torch.nn.Linear(2, 1).state_dict().__class__.__mro__", "torch.nn.Linear(2, 1).state_dict().fromkeys",
      "torch.nn.Linear(2, 1).state_dict().move_to_end", "torch.nn.Parameter.__new__",
      "torch.nn.Parameter(t).__class__.__subclasses__()", "torch.nn.Parameter(t)._parameter",
      "torch.nn.MSELoss().__dict__", "torch.nn.Linear(2, 1).__init__",
      "torch.nn.LSTM(2, 3)._tg_names", "torch.nn.GRU(2, 3).all_weights.__class__.__subclasses__",
      "torch.nn.RNN(2, 3).flatten_parameters.__func__", "torch.nn.LazyBatchNorm1d().running_mean.__class__.__subclasses__",
      "torch.nn.LazyBatchNorm2d()._lazy", "torch.nn.LazyBatchNorm1d().eager",
      "torch.nn.ParameterList()._size", "torch.nn.ParameterDict()._keys",
      "torch.nn.ParameterList([1])._get(0)", "torch.nn.ParameterDict().__dict__", "torch.nn.LSTMCell(2, 3).__dict__",
      "m = torch.nn.RNN(2, 3)\nm.mode = print\nm(torch.zeros(1, 2)).__class__.__subclasses__",
      "torch.optim.SGD([t], lr=0.1).__dict__", "torch.optim.SGD([t], lr=0.1)._update_group",
      "torch.optim.SGD([t], lr=0.1).state.default_factory", "torch.optim.SGD.__init__",
      "torch.optim.Optimizer.__subclasses__", "torch.optim.Adam([t]).step.__func__",
      "torch.optim.Adagrad([t]).__dict__", "torch.optim.Adadelta([t])._update",
      "torch.optim.Adamax([t]).state.default_factory", "torch.optim.Adagrad([t])._first_state",
      "torch.optim.NAdam([t]).__class__.__mro__", "torch.optim.RAdam([t])._update.__globals__",
      "torch.autograd.Function.__subclasses__", "torch.autograd.Function.tg_subclass",
      "torch.autograd.Function.apply.__func__", "torch.autograd.Function.apply.__self__",
      "torch.autograd.functional.jacobian.__globals__", "torch.func.grad(f).__closure__",
      "torch.func.grad(f).__wrapped__", "torch.func.grad.__code__", "t.register_hook(f).__dict__",
      "t.register_hook(f)._hooks", "t.register_hook.__self__", "torch.autograd.Variable.__new__",
      "torch.autograd.Variable(t).__class__.__bases__", "torch.nn.functional.linear.__globals__",
      "m = torch.nn.Linear(2, 1)\nm.forward = print", "m = torch.nn.Linear(2, 1)\nm.__class__ = int",
      "m = torch.nn.Linear(2, 1)\nm._parameters = {}", "m = torch.nn.Linear(2, 1)\nm.parameters = len",
      "m = torch.nn.Linear(2, 1)\nm.__dict__ = {}", "o = torch.optim.SGD([t], lr=0.1)\no.step = print",
      "o = torch.optim.SGD([t], lr=0.1)\no.param_groups = []", "torch.nn.Linear = print",
      "torch.optim.SGD = print", "torch.autograd.Function.apply = print"]
ASSIGNMENTS = ["t.__class__ = int", "t.array = 1", "y.grad_fn.op = None", "torch.tensor = len",
               "math.pi = 3", "f.__code__ = None", "t.backward = print", "torch.Tensor.sum = len",
               "t._version = 0", "t._vc = None"]
# a class's plain functions, reached through the class, with a `self` of another type
CLASS_FUNCTIONS = ["torch.Tensor.add(f, 1)", "torch.Tensor.backward(print)",
                   "torch.Tensor.detach_(math)", "torch.Tensor.requires_grad_(torch)",
                   "torch.Tensor.zero_([1.0])", "torch.Size.numel(f)", "torch.Tensor.sum()",
                   "torch.Tensor.retain_grad(y.grad_fn)", "torch.Tensor.item(t.dtype)"]

# results of other kinds: named pairs (sort, topk), tuples of pieces and indices, new tensors
# made from data or like another
RESULTS = ["t.sort().__class__.__init__", "t.sort().kind", "t.topk(1).tg_type_name", "t.topk(1)._make",
           "t.split(1)[0].__class__.__base__", "t.split(1).__class__.__mro__",
           "torch.nonzero(t, as_tuple=True).__class__.__new__", "torch.where(t > 0)[0].array",
           "torch.as_tensor(t).__class__.__getattribute__", "t.new_tensor([1]).__dict__", "torch.full_like(t, print)",
           "torch.is_tensor(t.__class__.__reduce__)", "t.std.__func__", "torch.logspace.__globals__",
           "t.new_zeros.__self__", "t.chunk(2)[0]._base"]

# the forms of issue 29: annotations are evaluated where CPython evaluates them, and reach no
# more than any expression does; unpacking and `**` hand out nothing a name could not
SYNTAX_FORMS = [
    "x: t.__class__.__mro__ = 1", "x: print.__self__", "x: int = print.__self__",
    "x: (lambda: 0).__code__", "t.grad_fn: int = 1", "t.__dict__: int = {}", "t.array: int = 1", "t.__class__.__mro__.x: int", "print.__self__[0]: int",
    "[t][0].__class__: int = 1", "def g(a: t.__class__.__mro__):\n    pass",
    "def g() -> print.__self__:\n    pass", "def g(a: int = t.__dict__):\n    pass",
    "def g(*a: f.__globals__, **k: int):\n    pass", "def g(a, /, *, b: t.__init__):\n    pass",
    "def g(a: int) -> int:\n    return a\nprint(g.__annotations__)",
    "x: int = 1\nprint(__annotations__)", "x: int\nprint(__annotations__['x'])",
    "class A:\n    x: t.__class__.__bases__ = 1", "class A:\n    __x__: int = 1",
    "class A:\n    __dict__: int", "class A:\n    _tg_v: int = 1",
    "class A:\n    x: int = 1\nprint(A.__annotations__)",
    "a, *b = t.__class__.__mro__", "first, *rest = print.__self__.__dict__",
    "*a, b = [t.__init__, 1]", "for a, *b in [t.__class__.__mro__]:\n    pass",
    "print([*t.__class__.__mro__])", "print((*f.__code__,))", "print({*print.__self__.__dict__})",
    "print({**t.__dict__})", "print({**torch.__dict__})", "print({**math.__dict__, 'k': 1})",
    "print({**{'a': 1}, **print.__self__.__dict__})",
    "def g(a, /, **kw):\n    return kw\nprint(g(1, a=2)['a'].__class__.__bases__)",
    "def g(a, /):\n    return a\nprint(g(t).__class__.__dict__)",
    "from . import os", "from .os import system", "from ..torch import _C",
    "try:\n    pass\nexcept* Exception:\n    pass", "print(1j.__class__)", "print((x := print.__self__))",
]
V2_ATTEMPTS = ([("lambda", e) for e in LAMBDAS] + [("comprehension", e) for e in COMPREHENSIONS]
               + [("dict-set", e) for e in DICTS_AND_SETS] + [("call", e) for e in CALLS]
               + [("try", e) for e in TRY_EXCEPT] + [("raise", e) for e in RAISES]
               + [("del", e) for e in DELETIONS] + [("scope", e) for e in SCOPES]
               + [("type", e) for e in TYPES] + [("decorator", e) for e in DECORATORS]
               + [("numpy", e) for e in NUMPY] + [("syntax", e) for e in SYNTAX_FORMS])
# a generator object shows send, throw and close: none of its frame, code, greenlet or state
_GEN = "def g(x):\n    yield x\n    yield from [x]\n"
GENERATORS = [_GEN + "print(g(t).gi_frame)", _GEN + "print(g(t).gi_code)",
              _GEN + "print(g(t).gi_frame.f_globals)", _GEN + "print(g(t)._steps)",
              _GEN + "print(g(t).__next__)", _GEN + "print(g(t).send.__self__)",
              _GEN + "print(g(t).close.__func__)", _GEN + "print(g(t)._greenlet)",
              _GEN + "print(g(t).gi_running)", _GEN + "it = g(t)\nnext(it)\nprint(it._locals)",
              _GEN + "print(g(t).throw(ValueError))", _GEN + "print(type(g(t))(iter([1]), 0, 'x'))",
              _GEN + "print(type(g(t)).__init__)", _GEN + "print(g(t)._rt.classes)",
              _GEN + "print(next(g(t)).__class__.__getattribute__)", _GEN + "print([v.__class__.__reduce__ for v in g(t)])",
              "def g():\n    yield print.__self__\nprint(list(g()))",
              "def g():\n    yield from print.__self__.__dict__\nprint(list(g()))",
              "def g():\n    with open('x.txt', 'w') as f:\n        yield f.buffer\nprint(list(g()))",
              "def g():\n    import os\n    yield os.fork()\nprint(list(g()))"]
# the run's files (open, os, os.path, torch.save/load): their objects' insides and os's host
# functions; what they can do harmlessly is in FILE_ESCAPES below
FILES = ["open('x.txt', 'w').buffer", "open('x.txt', 'w').fileno()", "open('x.txt', 'w')._CHUNK_SIZE",
         "open('x.txt', 'w').__class__.__init__", "open('x.txt', 'w').detach()",
         "type(open('x.txt', 'w'))(t)", "open('x.txt', 'w').__enter__",
         "open('x.txt', 'w', buffering=0)", "open(0).read()", "open(1, 'w')",
         "import os\nos.system('ls')", "import os\nos.execv('/bin/sh', ['sh'])",
         "import os\nos.environ.__dict__", "import os\nos.path.__dict__",
         "import os\nos.getcwd.__self__", "import os\nos.listdir.__call__",
         "import os\nos.path.expanduser('~')", "import os\nos.path.join.__globals__",
         "import os\nos.open('x', 0)", "import os\nos.fdopen(1)", "import os\nos.scandir('.')",
         "import os\nos.stat('.')", "import os\nos.getpid()", "import os\nos.putenv('A', 'B')",
         "import os\nos.urandom(4)", "import os.path as p\np.getmtime('.')",
         "from os import popen\npopen('ls')", "from os.path import expandvars\nexpandvars('$HOME')",
         "torch.load(open('x.txt', 'w'))", "torch.save(t, open('x.txt', 'w'))",
         "torch.save(torch.nn.Linear(1, 1), 'm.pt')", "torch.save(print, 'p.pt')",
         "torch.load('x.pt', pickle_module=print)", "open('x.txt', 'w').name.__class__.__mro__"]
# the standard modules: no module internal, no host function, no dunder of what they make, no
# unbounded work in C (stdlib/)
STANDARD = ["import sys\nsys.path.append('x')", "import sys\nprint(sys.stdout._rt)",
            "import sys\nsys.settrace(f)", "import sys\nsys.stdout.write.__self__._rt",
            "import sys\nsys._getframe()", "from sys import modules\nprint(modules)",
            "import time\ntime.sleep.__globals__", "import time\ntime.get_clock_info('time')",
            "import itertools\nitertools.count()._it", "import itertools\nitertools.chain.__call__",
            "import itertools\nsum(itertools.product(itertools.count()))",
            "import itertools\nlist(itertools.permutations([1], 10 ** 12))",
            "import itertools\nit = iter([1])\nfor i in range(2000):\n    it = itertools.chain(it)\nlist(it)",
            "import functools\nfunctools.partial(f).func.__globals__",
            "import functools\nfunctools.wraps(f)(f).__wrapped__",
            "import functools\nfunctools.lru_cache(f).__wrapped__", "import functools\nprint(functools.update_wrapper)",
            "import functools\nfunctools.cmp_to_key(f)(1).obj",
            "import collections\ncollections.deque([1]) * 10 ** 9",
            "import collections\ncollections.deque(iter(int, 1))",
            "import collections\ncollections.Counter('ab').__dict__",
            "import copy\ncopy.deepcopy(t)", "import copy\ncopy.deepcopy(torch)", "import copy\ncopy.copy.__globals__",
            "import re\nre.compile('a').__class__.__mro__", "import re\nre.match('a', 'a').__reduce__()",
            "import re\nre.sub('', 'x' * 10000, 'y' * 10000)", "import re\nre._compile('a', 0)",
            "import re\nre.compile('').sub('x' * 10000, 'y' * 10000)",
            "import typing\ntyping.List['os.system(1)']", "import typing\ntyping.List.hint",
            "import typing\ntyping.get_type_hints(f)",
            "import warnings\nwarnings.showwarning = print", "import warnings\nwarnings.warn.__closure__",
            "import warnings\nwarnings.catch_warnings()", "import string\nstring.Formatter().get_field('a', [], {})",
            "import random\nrandom.Random(1)._randbelow(3)", "import random\nrandom.randbytes(10 ** 9)"]
# a tensor's storages: their memory, their class and the engine's helpers stay out of reach
STORAGE = ["t.storage().__class__.__subclasses__()", "t.storage()._array", "t.storage()._tensor",
           "t.untyped_storage()._array", "t.storage().__class__.__mro__", "t.storage().__dict__",
           "t.storage().__init__.__globals__", "t.storage().tolist.__self__",
           "type(t.storage()).__init__", "t.storage().__class__._title", "t.storage()._index(0)",
           "getattr(t.storage(), '_array')", "t.storage().__getitem__.__globals__",
           "t.untyped_storage().__class__.__base__", "t.untyped_storage().__class__.__bases__",
           "t.storage().__reduce__()", "t.storage().__setitem__(0, 1)", "t.storage()._slices",
           "type(t.storage()).size(print)", "type(t.untyped_storage()).tolist(math)",
           "t.storage().fill_(1)", "t.storage().untyped()", "t.storage().share_memory_()",
           "t.untyped_storage().from_file('x')", "t.storage().from_file('x')",
           "t.resize_.__func__", "t.data_ptr.__self__", "t.storage().size.__self__",
           "t.storage().device.__class__.__mro__", "t.storage().dtype.np",
           "'{0._array}'.format(t.storage())", "f'{t.storage().__class__.__dict__}'",
           "t.storage().data_ptr.__globals__", "t.storage().pickle_storage_type()",
           "type(t.storage())(t)", "t.untyped_storage().__class__([1])", "type(t.storage())._over(t)"]
# grad_fn's `_saved_*` names (torch's catalogue) reach saved values, never the node's insides
SAVED = ["y.grad_fn._saved_self.__class__.__mro__", "y.grad_fn._saved_saved", "y.grad_fn._saved_op",
         "y.grad_fn.next_functions[0][0]._saved_self._grad", "y.grad_fn._saved_",
         "y.grad_fn._raw_saved_self", "y.grad_fn._saved_self_sym_sizes.__class__.__base__",
         "getattr(y.grad_fn, '_saved_params')", "(t * 2).grad_fn._saved_other.array",
         "t.exp().grad_fn._saved_result._grad_fn", "t.exp().grad_fn._saved_result.grad_fn.op",
         "y.grad_fn.metadata.__class__.__subclasses__()", "y.grad_fn.user_metadata",
         "y.grad_fn.register_hook(print).__dict__", "y.grad_fn.register_prehook(f)._hooks",
         "y.grad_fn._saved_self_sym_sizes = 1",
         "torch.autograd.graph.Node.__mro__", "torch.autograd.graph.Node._tg_is_instance",
         "torch.func.vmap(f).__closure__", "torch.func.jacrev(f).__wrapped__",
         "torch.func.vjp(f, t)[1].__closure__", "import functorch\nfunctorch.__dict__",
         "import functorch\nfunctorch.vmap.__globals__", "torch.func.hessian(f).__code__"]
ATTEMPTS = ([("dunder", e) for e in DUNDER_CHAINS] + [("storage", e) for e in STORAGE] + [("saved", e) for e in SAVED]
            + [("builtin", e) for e in FORBIDDEN_NAMES]
            + [("import", e) for e in IMPORTS] + [("format", e) for e in FORMAT_STRINGS]
            + [("torch-io", e) for e in TORCH_IO] + [("assign", e) for e in ASSIGNMENTS]
            + [("random", e) for e in RANDOM] + [("class", e) for e in CLASS_FUNCTIONS]
            + [("data", e) for e in DATA] + [("collections", e) for e in COLLECTIONS]
            + [("__name__", e) for e in NAMES] + [("generator", e) for e in GENERATORS]
            + [("nn", e) for e in NN] + [("result", e) for e in RESULTS]
            + [("files", e) for e in FILES] + [("standard", e) for e in STANDARD] + V2_ATTEMPTS)
_STATEMENTS = ("import ", "from ", "raise ", "del ", "def ", "global ", "@")


def _as_statement(attempt: str, kind: str = "") -> str:
    prelude = "import math\nimport numpy as np\ndef f(a):\n    return a\n" + T
    if kind == "try":
        return prelude + "try:\n    " + attempt + "\n"
    if kind == "syntax" and not attempt.startswith("print("):
        return prelude + attempt + "\n"
    if attempt.startswith(_STATEMENTS) or " = " in attempt:
        return prelude + attempt + "\n"
    return prelude + f"print({attempt})\n"


@pytest.mark.parametrize("kind,attempt", ATTEMPTS, ids=[f"{k}:{a}" for k, a in ATTEMPTS])
def test_escape_attempt_is_refused(kind, attempt, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = _as_statement(attempt, kind)
    out = io.StringIO()
    result = run_source(source, "escape.tg", out=out, err=io.StringIO())
    assert result.error is not None, f"not refused: {attempt!r} printed {out.getvalue()!r}"
    assert result.error.error_class in {"AttributeError", "NameError", "ValueError",
                                        "SyntaxError", "ImportError", "TypeError",
                                        "NotImplementedError", "MemoryError", "OSError",
                                        "FileNotFoundError", "RecursionError"}
    rendered = result.error.render(source)
    assert rendered.startswith("escape.tg:") and "Traceback" not in rendered
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_a_module_whose_forward_reaches_a_dunder_is_refused():
    """A program's method runs in the sandbox wherever it is called from: a Module made from
    a .tg forward (as the interpreter's class statement makes it) cannot reach `__class__`."""
    from autodiff.engine.api import torch
    from autodiff.engine.autograd.function import Function
    from autodiff.engine.nn.module import Module
    from autodiff.text.diagnostics import TgError

    source = ("def forward(self, x):\n    return x.__class__.__mro__\n"
              "def backward(ctx, g):\n    return ctx.__dict__\n")
    result = run_source(source, "methods.tg", out=io.StringIO())
    assert result.error is None
    net = Module.tg_subclass("Net", {"forward": result.globals["forward"]})()
    with pytest.raises(TgError, match="has no attribute '__mro__'"):
        net(torch.ones(1))
    fn = Function.tg_subclass("Fn", {"forward": lambda ctx, x: x * 2,
                                     "backward": result.globals["backward"]})
    with pytest.raises(TgError, match="attribute '__dict__' is not supported"):
        fn.apply(torch.ones(1, requires_grad=True)).sum().backward()


def test_the_suite_is_large():
    assert len(ATTEMPTS) >= 100 and len(V2_ATTEMPTS) >= 80 and len(CLASSES) >= 60


def test_legitimate_programs_still_run():
    out = io.StringIO()
    result = run_source("import math\n" + T + "y.backward()\nprint(t.grad, y.grad_fn.name(), t.shape, "
                        "'{:.2f}'.format(1.5), f'{y:.1f}', [1].pop(), math.sqrt(4.0))\n",
                        "ok.tg", out=out)
    assert result.error is None, result.error
    assert out.getvalue() == "tensor([2., 4.]) SumBackward0 torch.Size([2]) 1.50 5.0 1 2.0\n"


@pytest.mark.parametrize("value", ["print", "math", "f", "torch", "y.grad_fn", "t.dtype", "[t]"])
@pytest.mark.parametrize("attribute", ["requires_grad", "data", "grad"])
def test_a_writable_attribute_takes_only_what_torch_takes(attribute, value):
    source = "import math\ndef f(a):\n    return a\n" + T + f"t.{attribute} = {value}\n"
    result = run_source(source, "assign.tg", out=io.StringIO(), err=io.StringIO())
    assert result.error is not None and result.error.line == 6
    assert result.error.error_class in {"TypeError", "RuntimeError"}


# ---- classes: a program's own nn.Module and autograd.Function subclasses ----

CLASS_PRELUDE = ("import torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n        return x\n"
                 "class Sq(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                 "        return x * x\n    @staticmethod\n    def backward(ctx, g):\n"
                 "        return 2 * g\n")
# a plain class (`class A:`) is made from ProgramObject: only the special methods Python's
# machinery calls may be defined, and no _tg/tg_ name or engine internal
PLAIN_CLASSES = [
    "class A:\n    def __getattr__(self, name):\n        return 1",
    "class A:\n    def __getattribute__(self, name):\n        return 1",
    "class A:\n    def __eq__(self, other):\n        return other.__class__.__mro__\nA() == 1",
    "class A:\n    def __exit__(self, *a):\n        return True",
    "class A:\n    def __enter__(self):\n        return self",
    "class A:\n    def __del__(self):\n        print(1)",
    "class A:\n    def __init_subclass__(cls):\n        pass",
    "class A:\n    def __reduce__(self):\n        pass",
    "class A:\n    def __class_getitem__(cls, k):\n        pass",
    "class A:\n    def _tg_helper(self):\n        pass",
    "class A:\n    def tg_subclass(self):\n        pass",
    "class A:\n    __slots__ = ()",
    "class A:\n    _tg_hidden = 1",
    "class A:\n    tg_subclass = print",
    "class A:\n    x = print.__self__",
    "class A:\n    x, y = 1, 2",
    "class A:\n    x = 1\nA.x = print",
    "class A:\n    x = 1\nprint(A.__dict__)",
    "class A:\n    f = lambda self: self.__class__.__new__\nA().f()",
    "class A:\n    pass\nprint(A.__subclasses__())",
    "class A:\n    pass\nprint(A().__class__.__getattribute__)",
    "class A:\n    pass\nprint(A().__dict__)",
    "class A:\n    pass\nprint(A.mro())",
    "class A:\n    pass\nprint(A.tg_subclass)",
    "class A:\n    pass\nprint(A._tg_readable)",
    "class A:\n    pass\nprint(type(A).__call__)",
    "class A:\n    pass\nA.__init__ = print",
    "class A:\n    pass\na = A()\na.__class__ = int",
    "class A:\n    pass\na = A()\na._tg_public = {'x'}",
    "class A:\n    def __init__(self):\n        self.__dict__['x'] = 1\nA()",
    "class A:\n    def __init__(self):\n        self.f = print.__self__\nA()",
    "class A:\n    def __repr__(self):\n        return self.__class__\nprint(A())",
    "class A:\n    def __getitem__(self, k):\n        return k.__class__.__reduce__\nprint(A()[1])",
    "class A:\n    def __len__(self):\n        return self.__len__.__globals__\nlen(A())",
    "class A(object):\n    def __init__(self):\n        super().__setattr__('x', 1)\nA()",
    "class A:\n    def __init__(self):\n        super().__init__(print)\nA()",
    "class A:\n    def run(self):\n        return self.run.__func__\nA().run()",
    "object = print\nclass A(object):\n    pass",
    "class A:\n    pass\nclass B(A, A):\n    pass",
    "from torch.utils.data import Dataset\nclass D(Dataset):\n    pass\nprint(D.tg_subclass)",
    "from torch.utils.data import Dataset\nprint(Dataset.__getitem__)",
    "from torch.utils.data import Dataset\nprint(Dataset.tg_subclass)",
    "from torch.utils.data import TensorDataset\nclass T(TensorDataset):\n    pass",
    "from torch.utils.data import Dataset, DataLoader\nclass D(Dataset):\n"
    "    def __getitem__(self, i):\n        return print.__self__\n"
    "    def __len__(self):\n        return 1\nprint(list(DataLoader(D())))",
]
CLASSES = PLAIN_CLASSES + [
    "class A(int):\n    pass",
    "class A(nn.Module, nn.Module):\n    pass",
    "class A(nn.Module, metaclass=type):\n    pass",
    "class A(*[nn.Module]):\n    pass",
    "class A(print):\n    pass",
    "@print\nclass A(nn.Module):\n    pass",
    "class A(nn.Linear):\n    pass",
    "class A(torch.Tensor):\n    pass",
    "class A(torch.optim.SGD):\n    pass",
    "class A(torch.nn.functional):\n    pass",
    "class A(nn.Module):\n    _tg_public = frozenset({'x'})",
    "class A(nn.Module):\n    __slots__ = ()",
    "class A(nn.Module):\n    def __init_subclass__(cls):\n        pass",
    "class A(torch.autograd.Function):\n    def __new__(cls):\n        return 1",
    "class A(nn.Module):\n    def tg_subclass(self):\n        return 1",
    "class A(nn.Module):\n    _tg_readable = print",
    "class A(nn.Module):\n    def __getattr__(self, name):\n        return 1",
    "class A(nn.Module):\n    def _parameters(self):\n        return 1",
    "class A(nn.Module):\n    import os",
    "class A(nn.Module):\n    for i in range(2):\n        pass",
    "class A(nn.Module):\n    if True:\n        x = 1",
    "class A(nn.Module):\n    print('body')",
    "class A(nn.Module):\n    x.y = 1",
    "class A(nn.Module):\n    class B(nn.Module):\n        pass",
    "class A(nn.Module):\n    x += 1",
    "print(Net().__dict__)",
    "print(Net().__class__.__module__.__class__.__subclasses__())",
    "print(Net().__class__.__subclasses__())",
    "print(Net.__subclasses__())",
    "print(Net.__mro__)",
    "print(Net.tg_subclass)",
    "print(nn.Module.tg_subclass('X', {'__getattr__': print}))",
    "print(Net().forward.__func__)",
    "print(Net().forward.__globals__)",
    "print(Net()._tg_readable)",
    "n = Net()\nn.__dict__ = {}",
    "n = Net()\nn._tg_public = {'x'}",
    "class B(nn.Module):\n    def forward(self):\n        return self.__class__.__qualname__\nB()()",
    "class B(nn.Module):\n    def forward(self):\n        return self.forward.__code__\nB()()",
    "class B(nn.Module):\n    def forward(self):\n        return super().__repr__()\nB()()",
    "class B(nn.Module):\n    def forward(self):\n        return super().__class__\nB()()",
    "class B(nn.Module):\n    def forward(self):\n        return super(int, 1).__init__()\nB()()",
    "class B(nn.Module):\n    def forward(self):\n        return super(Net, self).__init__()\nB()()",
    "class B(nn.Module):\n    def forward(self):\n        return super().tg_subclass('X', {})\nB()()",
    "print(type(Net())('x'))",
    "print(Sq.__dict__)",
    "print(Sq.apply.__self__)",
    "print(Sq.tg_subclass)",
    "print(Sq.forward.__globals__)",
    "class B(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
    "        return ctx.__class__.__call__\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"
    "B.apply(torch.ones(1))",
    "class B(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
    "        ctx._saved = (x,)\n        return x\n    @staticmethod\n    def backward(ctx, g):\n"
    "        return g\nB.apply(torch.ones(1))",
    "class B(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
    "        ctx.save_for_backward = print\n        return x\n    @staticmethod\n"
    "    def backward(ctx, g):\n        return g\nB.apply(torch.ones(1))",
    "class B(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.__dict__['x'] = 1\nB()",
    "class B(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self._modules = {}\nB()",
    "class B(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.forward = print\nB()",
    "class B(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.parameters = print\nB()",
    "class B(nn.Module):\n    def forward(self):\n        return self.__dict__\nB()()",
    "class B(nn.Module):\n    def forward(self):\n        return self.forward.__self__\nB()()",
    "class B(nn.Module):\n    def forward(self):\n        return super().__getattribute__('x')\nB()()",
    "class B(nn.Module):\n    def forward(self):\n        return super().__setattr__('_modules', 1)\nB()()",
    "class B(nn.Module):\n    def forward(self):\n        return super(B, B).__init__()\nB()()",
    "n = Net()\nn.forward = print",
    "Net.forward = print",
    "Sq.apply = print",
    "print(super().__init__())",
    "def f(self):\n    return super().__init__()\nf(Net())",
]


@pytest.mark.parametrize("attempt", CLASSES)
def test_class_escape_attempt_is_refused(attempt, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = CLASS_PRELUDE + attempt + "\n"
    out = io.StringIO()
    result = run_source(source, "escape.tg", out=out, err=io.StringIO())
    assert result.error is not None, f"not refused: {attempt!r} printed {out.getvalue()!r}"
    assert result.error.error_class in {"AttributeError", "NameError", "SyntaxError", "TypeError",
                                        "NotImplementedError", "RuntimeError"}, result.error
    rendered = result.error.render(source)
    assert rendered.startswith("escape.tg:") and "Traceback" not in rendered
    assert list(tmp_path.iterdir()) == []


# ---- the run's files: what a program can do with them reaches nothing of the host ----

# name -> (program, what it prints, its error line or None): the same under autodiff and
# under the torch reference (tests/test_reference_escapes.py), and nothing on the disk
FILE_ESCAPES = {
    "reading the host's files": (
        "for path in ['/etc/passwd', '../../../../etc/passwd', '/proc/self/environ', '~/.bashrc']:\n"
        "    try:\n        print(open(path).read())\n    except FileNotFoundError as e:\n"
        "        print(e, e.errno, e.filename == path)\n",
        "[Errno 2] No such file or directory: '/etc/passwd' 2 True\n"
        "[Errno 2] No such file or directory: '../../../../etc/passwd' 2 True\n"
        "[Errno 2] No such file or directory: '/proc/self/environ' 2 True\n"
        "[Errno 2] No such file or directory: '~/.bashrc' 2 True\n", None),
    "listing the host's folders": (
        "import os\nprint(os.listdir('/'), os.listdir('/home'), os.listdir('..'))\n"
        "os.chdir('/')\nprint(os.getcwd(), os.path.exists('etc/passwd'), os.path.isdir('/tmp'))\n",
        "['home'] ['tg'] ['tg']\n/ False False\n", None),
    "the host's environment": (
        "import os\nprint(os.environ, os.getenv('HOME'), os.getenv('PATH'), 'USER' in os.environ)\n"
        "os.environ['HOME'] = '/root'\nprint(os.path.exists(os.environ['HOME']))\n",
        "environ({}) None None False\nFalse\n", None),
    "writing over the host's files": (
        "import os\nos.makedirs('/tmp/x', exist_ok=True)\n"
        "open('/tmp/x/marker', 'w').write('x')\nopen('../../etc_marker', 'w').write('x')\n"
        "torch.save(torch.ones(1), '/tmp/x/marker.pt')\n"
        "print(sorted(os.listdir('/')), os.listdir('/tmp/x'))\n",
        "['etc_marker', 'home', 'tmp'] ['marker', 'marker.pt']\n", None),
    "a crafted pickle": (
        "with open('evil.pt', 'w') as f:\n"
        "    f.write(\"cos\\nsystem\\n(S'touch pwned'\\ntR.\")\n"
        "torch.load('evil.pt', weights_only=False)\n", "", "UnpicklingError"),
    "filling the memory with files": (
        "chunk = 'x' * 1000000\nf = open('big.txt', 'w')\nfor i in range(100):\n"
        "    f.write(chunk)\n", "", "OSError: [Errno 28] No space left on device"),
}


@pytest.mark.parametrize("name", list(FILE_ESCAPES))
def test_files_never_reach_the_host(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source, printed, error = FILE_ESCAPES[name]
    out = io.StringIO()
    result = run_source(source, "files.tg", out=out, err=io.StringIO())
    assert out.getvalue() == printed
    if error is None:
        assert result.error is None, result.error
    else:
        assert error in f"{result.error.error_class}: {result.error.message}"
    assert list(tmp_path.iterdir()) == [] and not Path("/tmp/x/marker").exists()
