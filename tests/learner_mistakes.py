"""Learner mistakes and the full stderr autodiff shows for each: PyTorch's (or Python's)
`Class: message` line first, then the hint block. Each was read by eye before it was
committed; tests/test_hints.py runs them. Every program starts with `import torch`."""

MISTAKES = [  # (name, program after `import torch`, exit code, stdout, stderr)
    ('method_typo',
     'x = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\ny.backwards()\n',
     1, '',
     "method_typo.tg:4:1: AttributeError: 'Tensor' object has no attribute 'backwards'\n"
     '    y.backwards()\n'
     '    ^^^^^^^^^^^\n'
     "hint: Did you mean: 'backward'?\n"),
    ('attribute_typo',
     'x = torch.ones(2, requires_grad=True)\nprint(x.gard)\n',
     1, '',
     "attribute_typo.tg:3:7: AttributeError: 'Tensor' object has no attribute 'gard'\n"
     '    print(x.gard)\n'
     '          ^^^^^^\n'
     "hint: Did you mean: 'grad'?\n"),
    ('name_typo',
     'weight = torch.ones(3)\nprint(wieght)\n',
     1, '',
     "name_typo.tg:3:7: NameError: name 'wieght' is not defined\n"
     '    print(wieght)\n'
     '          ^^^^^^\n'
     "hint: Did you mean: 'weight'?\n"),
    ('keyword_typo',
     'x = torch.tensor([1.0, 2.0], require_grad=True)\n',
     1, '',
     "keyword_typo.tg:2:5: TypeError: tensor() got an unexpected keyword argument 'require_grad'\n"
     '    x = torch.tensor([1.0, 2.0], require_grad=True)\n'
     '        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
     "hint: Did you mean: 'requires_grad'?\n"),
    ('backward_keyword_typo',
     'x = torch.ones(2, requires_grad=True)\nx.sum().backward(retain_grap=True)\n',
     1, '',
     "backward_keyword_typo.tg:3:1: TypeError: Tensor.backward() got an unexpected keyword argument 'retain_grap'\n"
     '    x.sum().backward(retain_grap=True)\n'
     '    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
     "hint: Did you mean: 'retain_graph'?\n"),
    ('torch_function_typo',
     'x = torch.tensr([1.0])\n',
     1, '',
     "torch_function_typo.tg:2:5: AttributeError: module 'torch' has no attribute 'tensr'\n"
     '    x = torch.tensr([1.0])\n'
     '        ^^^^^^^^^^^\n'
     "hint: Did you mean: 'tensor'?\n"),
    ('nn_class_typo',
     'import torch.nn as nn\nlayer = nn.Linaer(2, 3)\n',
     1, '',
     "nn_class_typo.tg:3:9: AttributeError: module 'torch.nn' has no attribute 'Linaer'\n"
     '    layer = nn.Linaer(2, 3)\n'
     '            ^^^^^^^^^\n'
     "hint: Did you mean: 'Linear'?\n"),
    ('functional_typo',
     'import torch.nn.functional as F\ny = F.sigmod(torch.ones(2))\n',
     1, '',
     "functional_typo.tg:3:5: AttributeError: module 'torch.nn.functional' has no attribute 'sigmod'\n"
     '    y = F.sigmod(torch.ones(2))\n'
     '        ^^^^^^^^\n'
     "hint: Did you mean: 'sigmoid'?\n"),
    ('wrong_namespace',
     'layer = torch.Linear(2, 3)\n',
     1, '',
     "wrong_namespace.tg:2:9: AttributeError: module 'torch' has no attribute 'Linear'\n"
     '    layer = torch.Linear(2, 3)\n'
     '            ^^^^^^^^^^^^\n'
     "hint: Did you mean: torch.nn.Linear? 'Linear' is in torch.nn, not in torch.\n"),
    ('missing_import',
     'layer = nn.Linear(2, 3)\n',
     1, '',
     "missing_import.tg:2:9: NameError: name 'nn' is not defined\n"
     '    layer = nn.Linear(2, 3)\n'
     '            ^^\n'
     "hint: 'nn' is bound by an import: add `import torch.nn as nn` at the top of the program.\n"),
    ('def_keyword_typo',
     'def f(x, scale=2.0):\n    return x * scale\nprint(f(1.0, scal=3.0))\n',
     1, '',
     "def_keyword_typo.tg:4:7: TypeError: f() got an unexpected keyword argument 'scal'\n"
     '    print(f(1.0, scal=3.0))\n'
     '          ^^^^^^^^^^^^^^^^\n'
     "hint: Did you mean: 'scale'?\n"),
    ('non_scalar_backward',
     'x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 2\ny.backward()\n',
     1, '',
     'non_scalar_backward.tg:4:1: RuntimeError: grad can be implicitly created only for scalar outputs\n'
     '    y.backward()\n'
     '    ^^^^^^^^^^^^\n'
     'hint: backward() with no argument needs a single-element (scalar) result. Sum it first, y.sum().backward(), or give the gradient of each element, y.backward(torch.ones_like(y)).\n'),
    ('in_place_on_leaf',
     'w = torch.tensor([1.0, 2.0], requires_grad=True)\nw -= 0.1\n',
     1, '',
     'in_place_on_leaf.tg:3:1: RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.\n'
     '    w -= 0.1\n'
     '    ^^^^^^^^\n'
     'hint: w is a leaf that requires grad: autograd cannot record changing it in place. Update it inside `with torch.no_grad():` (as an optimiser step does), or make a new tensor instead (w = w + ...).\n'),
    ('in_place_method_on_leaf',
     'w = torch.tensor([1.0, 2.0], requires_grad=True)\nw.add_(1.0)\n',
     1, '',
     'in_place_method_on_leaf.tg:3:1: RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.\n'
     '    w.add_(1.0)\n'
     '    ^^^^^^^^^^^\n'
     'hint: w is a leaf that requires grad: autograd cannot record changing it in place. Update it inside `with torch.no_grad():` (as an optimiser step does), or make a new tensor instead (w = w + ...).\n'),
    ('backward_twice',
     'x = torch.tensor(2.0, requires_grad=True)\ny = x * x\ny.backward()\ny.backward()\n',
     1, '',
     'backward_twice.tg:5:1: RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.\n'
     '    y.backward()\n'
     '    ^^^^^^^^^^^^\n'
     'hint: The first backward() freed the graph. Call the first one as y.backward(retain_graph=True) to backward through it again, or compute y again before each backward().\n'),
    ('integer_requires_grad',
     'x = torch.tensor([1, 2, 3], requires_grad=True)\n',
     1, '',
     'integer_requires_grad.tg:2:5: RuntimeError: Only Tensors of floating point and complex dtype can require gradients\n'
     '    x = torch.tensor([1, 2, 3], requires_grad=True)\n'
     '        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
     'hint: Gradients need floating-point values, and this tensor holds integers (write 1. rather than 1, or pass dtype=torch.float).\n'
     '      For example: torch.tensor([1, 2, 3], dtype=torch.float, requires_grad=True)\n'),
    ('matmul_shapes',
     'a = torch.ones(2, 3)\nb = torch.ones(2, 3)\nc = a @ b\n',
     1, '',
     'matmul_shapes.tg:4:5: RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)\n'
     '    c = a @ b\n'
     '        ^^^^^\n'
     "hint: a is 2×3 and b is 2×3 (as matrices): a matrix product needs the left's columns (3) to equal the right's rows (2).\n"
     '      b.T is 3×2: did you mean to transpose it?\n'),
    ('matrix_vector_shapes',
     'm = torch.ones(2, 3)\nv = torch.ones(2)\nprint(torch.mv(m, v))\n',
     1, '',
     'matrix_vector_shapes.tg:4:7: RuntimeError: size mismatch, got input (2), mat (2x3), vec (2)\n'
     '    print(torch.mv(m, v))\n'
     '          ^^^^^^^^^^^^^^\n'
     "hint: m is 2×3 and v has 2 elements: a matrix times a vector needs the matrix's columns (3) to equal the vector's length.\n"),
    ('vector_dot_shapes',
     'a = torch.ones(3)\nb = torch.ones(2)\nprint(a @ b)\n',
     1, '',
     'vector_dot_shapes.tg:4:7: RuntimeError: inconsistent tensor size, expected tensor [3] and src [2] to have the same number of elements, but got 3 and 2 elements respectively\n'
     '    print(a @ b)\n'
     '          ^^^^^\n'
     'hint: a has 3 elements and b has 2: a dot product of two vectors needs equal lengths.\n'),
    ('linear_input_size',
     'import torch.nn as nn\nlayer = nn.Linear(2, 3)\nout = layer(torch.ones(4, 5))\n',
     1, '',
     'linear_input_size.tg:4:7: RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x5 and 2x3)\n'
     '    out = layer(torch.ones(4, 5))\n'
     '          ^^^^^^^^^^^^^^^^^^^^^^^\n'
     "hint: The input's last size is 5, but the layer takes 2 features (nn.Linear(in_features=2, ...)): reshape the input or change in_features.\n"),
    ('broadcast_shapes',
     'a = torch.ones(2)\nb = torch.ones(3)\nprint(a + b)\n',
     1, '',
     'broadcast_shapes.tg:4:7: RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0\n'
     '    print(a + b)\n'
     '          ^^^^^\n'
     'hint: Element-wise operations line shapes up from the last dimension; each pair of sizes must be equal or 1. Here a has 2 and b has 3 in that dimension.\n'),
    ('nonleaf_grad_warning',
     'x = torch.tensor(2.0, requires_grad=True)\ny = x * x\nz = y * 3\nz.backward()\nprint(y.grad)\n',
     0, 'None\n',
     "nonleaf_grad_warning.tg:6: UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.\n"
     '  print(y.grad)\n'
     'hint: y is not a leaf (it was computed from other tensors), so backward() does not keep its .grad and it reads None.\n'
     '      Call y.retain_grad() before backward() to keep it, or read the .grad of the leaf you created with requires_grad=True.\n'),
    ('unused_leaf_grad_none',
     'x = torch.tensor(2.0, requires_grad=True)\nw = torch.tensor(3.0, requires_grad=True)\n(x * 3).backward()\nw.grad.zero_()\n',
     1, '',
     "unused_leaf_grad_none.tg:5:1: AttributeError: 'NoneType' object has no attribute 'zero_'\n"
     '    w.grad.zero_()\n'
     '    ^^^^^^^^^^^^\n'
     'hint: w.grad is None. backward() has not reached w: it was not used to compute the tensor backward() ran from, was cut off by detach() or torch.no_grad(), or backward() has not run yet.\n'),
    ('no_requires_grad_grad_none',
     'x = torch.tensor(2.0)\ny = x * 3\nprint(x.grad * 2)\n',
     1, '',
     "no_requires_grad_grad_none.tg:4:7: TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'\n"
     '    print(x.grad * 2)\n'
     '          ^^^^^^^^^^\n'
     'hint: x.grad is None. x does not require grad: create it with requires_grad=True (or call x.requires_grad_()) before using it.\n'),
    ('fullwidth_semicolon',
     'x = torch.ones(2)；\n',
     2, '',
     "fullwidth_semicolon.tg:2:18: SyntaxError: invalid character '；' (U+FF1B)\n"
     '    x = torch.ones(2)；\n'
     '                     ^^\n'
     "hint: Did you mean ';'? '；' (fullwidth semicolon) is what a Chinese input method types; switch it to English (half-width) punctuation for code.\n"
     '      The line in ASCII: x = torch.ones(2);\n'),
    ('fullwidth_parens_comma',
     'x = torch.tensor（[1.0，2.0]）\n',
     2, '',
     "fullwidth_parens_comma.tg:2:17: SyntaxError: invalid character '（' (U+FF08)\n"
     '    x = torch.tensor（[1.0，2.0]）\n'
     '                    ^^\n'
     "hint: Did you mean '('? '（' (fullwidth left parenthesis) is what a Chinese input method types; switch it to English (half-width) punctuation for code.\n"
     '      The line in ASCII: x = torch.tensor([1.0,2.0])\n'),
    ('fullwidth_colon',
     'for i in range(2)：\n    print(i)\n',
     2, '',
     "fullwidth_colon.tg:2:18: SyntaxError: invalid character '：' (U+FF1A)\n"
     '    for i in range(2)：\n'
     '                     ^^\n'
     "hint: Did you mean ':'? '：' (fullwidth colon) is what a Chinese input method types; switch it to English (half-width) punctuation for code.\n"
     '      The line in ASCII: for i in range(2):\n'),
    ('chinese_quotes',
     'print(“梯度”)\n',
     2, '',
     "chinese_quotes.tg:2:7: SyntaxError: invalid character '“' (U+201C)\n"
     '    print(“梯度”)\n'
     '          ^\n'
     'hint: Did you mean \'"\'? \'“\' (left double quotation mark) is what a Chinese input method types; switch it to English (half-width) punctuation for code.\n'
     '      The line in ASCII: print("梯度")\n'),
    ('ideographic_space',
     'x = 1\u3000+ 2\n',
     2, '',
     'ideographic_space.tg:2:6: SyntaxError: invalid non-printable character U+3000\n'
     '    x = 1\u3000+ 2\n'
     '         ^^\n'
     "hint: Did you mean ' '? '\u3000' (ideographic space) is what a Chinese input method types; switch it to English (half-width) punctuation for code.\n"
     '      The line in ASCII: x = 1 + 2\n'),
    ('caret_under_cjk',
     'x = torch.ones(2)\nprint("梯度", x.gard)\n',
     1, '',
     "caret_under_cjk.tg:3:13: AttributeError: 'Tensor' object has no attribute 'gard'\n"
     '    print("梯度", x.gard)\n'
     '                  ^^^^^^\n'
     "hint: Did you mean: 'grad'?\n"),
    ('attribute_called',
     'x = torch.ones(2, requires_grad=True)\nprint(x.is_leaf())\n',
     1, '',
     "attribute_called.tg:3:7: TypeError: 'bool' object is not callable\n"
     '    print(x.is_leaf())\n'
     '          ^^^^^^^^^^^\n'
     'hint: x.is_leaf is a value (bool), not a method: write x.is_leaf without the ().\n'),
    ('layer_keyword_typo',
     'import torch.nn as nn\nlayer = nn.Linear(2, 3, bais=False)\n',
     1, '',
     "layer_keyword_typo.tg:3:9: TypeError: Linear.__init__() got an unexpected keyword argument 'bais'\n"
     '    layer = nn.Linear(2, 3, bais=False)\n'
     '            ^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
     "hint: Did you mean: 'bias'?\n"),
    ('unsupported_linalg',
     'A = torch.eye(2)\nB = torch.linalg.inv(A)\n',
     2, '',
     'unsupported_linalg.tg:3:5: NotImplementedError: torch.linalg.inv is not supported by autodiff\n'
     '    B = torch.linalg.inv(A)\n'
     '        ^^^^^^^^^^^^^^^^^^^\n'
     'hint: autodiff does not support this yet (Python or PyTorch has it): it is a limit of this tool, not a mistake in the program. docs/language.md ("Not supported") lists what .tg programs cannot use.\n'),
    ('unsupported_optimizer',
     'import torch.optim as optim\nw = torch.ones(2, requires_grad=True)\nopt = optim.LBFGS([w])\n',
     2, '',
     'unsupported_optimizer.tg:4:7: NotImplementedError: torch.optim.LBFGS is not supported by autodiff\n'
     '    opt = optim.LBFGS([w])\n'
     '          ^^^^^^^^^^^^^^^^\n'
     'hint: autodiff does not support this yet (Python or PyTorch has it): it is a limit of this tool, not a mistake in the program. docs/language.md ("Not supported") lists what .tg programs cannot use.\n'),
    ('cuda_device',
     'x = torch.ones(2, requires_grad=True)\ny = x.cuda()\n',
     1, '',
     'cuda_device.tg:3:5: AssertionError: Torch not compiled with CUDA enabled\n'
     '    y = x.cuda()\n'
     '        ^^^^^^^^\n'
     'hint: autodiff computes on the CPU, as a PyTorch without CUDA does. Leave out .cuda() and .to("cuda"), or choose the device as tutorials do: device = "cuda" if torch.cuda.is_available() else "cpu".\n'),
    ('math_on_tensor',
     'import math\nx = torch.tensor(1.0, requires_grad=True)\ny = math.sin(x)\ny.backward()\n',
     1, '',
     "math_on_tensor.tg:5:1: AttributeError: 'float' object has no attribute 'backward'\n"
     '    y.backward()\n'
     '    ^^^^^^^^^^\n'
     "hint: y is a Python number (float), not a tensor, so autograd never saw how it was computed: it came from outside torch (math.sin, .item(), float(), ...). Compute it with torch's functions on tensors (torch.sin, torch.exp, ...).\n"),
    ('integer_requires_grad_later',
     'x = torch.tensor([1, 2])\nx.requires_grad = True\n',
     1, '',
     'integer_requires_grad_later.tg:3:1: RuntimeError: only Tensors of floating point and complex dtype can require gradients\n'
     '    x.requires_grad = True\n'
     '    ^^^^^^^^^^^^^^^\n'
     'hint: Gradients need floating-point values, and this tensor holds integers (write 1. rather than 1, or pass dtype=torch.float).\n'),
]


# The same mistakes with `--lang zh`: autodiff's words in Chinese; PyTorch's (and Python's)
# `Class: message`, the source line and the caret exactly as in English.
CHINESE = {  # name -> stderr
    'method_typo':
        "method_typo.tg:4:1: AttributeError: 'Tensor' object has no attribute 'backwards'\n"
        '    y.backwards()\n'
        '    ^^^^^^^^^^^\n'
        "提示：你是不是想写：'backward'？\n",
    'attribute_typo':
        "attribute_typo.tg:3:7: AttributeError: 'Tensor' object has no attribute 'gard'\n"
        '    print(x.gard)\n'
        '          ^^^^^^\n'
        "提示：你是不是想写：'grad'？\n",
    'name_typo':
        "name_typo.tg:3:7: NameError: name 'wieght' is not defined\n"
        '    print(wieght)\n'
        '          ^^^^^^\n'
        "提示：你是不是想写：'weight'？\n",
    'keyword_typo':
        "keyword_typo.tg:2:5: TypeError: tensor() got an unexpected keyword argument 'require_grad'\n"
        '    x = torch.tensor([1.0, 2.0], require_grad=True)\n'
        '        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
        "提示：你是不是想写：'requires_grad'？\n",
    'backward_keyword_typo':
        "backward_keyword_typo.tg:3:1: TypeError: Tensor.backward() got an unexpected keyword argument 'retain_grap'\n"
        '    x.sum().backward(retain_grap=True)\n'
        '    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
        "提示：你是不是想写：'retain_graph'？\n",
    'torch_function_typo':
        "torch_function_typo.tg:2:5: AttributeError: module 'torch' has no attribute 'tensr'\n"
        '    x = torch.tensr([1.0])\n'
        '        ^^^^^^^^^^^\n'
        "提示：你是不是想写：'tensor'？\n",
    'nn_class_typo':
        "nn_class_typo.tg:3:9: AttributeError: module 'torch.nn' has no attribute 'Linaer'\n"
        '    layer = nn.Linaer(2, 3)\n'
        '            ^^^^^^^^^\n'
        "提示：你是不是想写：'Linear'？\n",
    'functional_typo':
        "functional_typo.tg:3:5: AttributeError: module 'torch.nn.functional' has no attribute 'sigmod'\n"
        '    y = F.sigmod(torch.ones(2))\n'
        '        ^^^^^^^^\n'
        "提示：你是不是想写：'sigmoid'？\n",
    'wrong_namespace':
        "wrong_namespace.tg:2:9: AttributeError: module 'torch' has no attribute 'Linear'\n"
        '    layer = torch.Linear(2, 3)\n'
        '            ^^^^^^^^^^^^\n'
        "提示：你是不是想写：torch.nn.Linear？'Linear' 在 torch.nn 里，不在 torch 里。\n",
    'missing_import':
        "missing_import.tg:2:9: NameError: name 'nn' is not defined\n"
        '    layer = nn.Linear(2, 3)\n'
        '            ^^\n'
        "提示：'nn' 要通过 import 引入：在程序开头加上 `import torch.nn as nn`。\n",
    'def_keyword_typo':
        "def_keyword_typo.tg:4:7: TypeError: f() got an unexpected keyword argument 'scal'\n"
        '    print(f(1.0, scal=3.0))\n'
        '          ^^^^^^^^^^^^^^^^\n'
        "提示：你是不是想写：'scale'？\n",
    'non_scalar_backward':
        'non_scalar_backward.tg:4:1: RuntimeError: grad can be implicitly created only for scalar outputs\n'
        '    y.backward()\n'
        '    ^^^^^^^^^^^^\n'
        '提示：不带参数的 backward() 要求结果只有一个元素（标量）。先求和：y.sum().backward()；或者给出每个元素的梯度：y.backward(torch.ones_like(y))。\n',
    'in_place_on_leaf':
        'in_place_on_leaf.tg:3:1: RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.\n'
        '    w -= 0.1\n'
        '    ^^^^^^^^\n'
        '提示：w 是需要梯度的叶子节点：autograd 无法记录对它的原地修改。请在 `with torch.no_grad():` 里更新它（优化器的 step 就是这么做的），或者生成一个新张量（w = w + ...）。\n',
    'in_place_method_on_leaf':
        'in_place_method_on_leaf.tg:3:1: RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.\n'
        '    w.add_(1.0)\n'
        '    ^^^^^^^^^^^\n'
        '提示：w 是需要梯度的叶子节点：autograd 无法记录对它的原地修改。请在 `with torch.no_grad():` 里更新它（优化器的 step 就是这么做的），或者生成一个新张量（w = w + ...）。\n',
    'backward_twice':
        'backward_twice.tg:5:1: RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.\n'
        '    y.backward()\n'
        '    ^^^^^^^^^^^^\n'
        '提示：第一次 backward() 已经释放了计算图。要再次沿它反向传播，第一次要这样调用：y.backward(retain_graph=True)；或者在每次 backward() 之前重新计算 y。\n',
    'integer_requires_grad':
        'integer_requires_grad.tg:2:5: RuntimeError: Only Tensors of floating point and complex dtype can require gradients\n'
        '    x = torch.tensor([1, 2, 3], requires_grad=True)\n'
        '        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
        '提示：梯度只能对浮点数求，而这个张量存的是整数（写成 1. 而不是 1，或者传入 dtype=torch.float）。\n'
        '      例如：torch.tensor([1, 2, 3], dtype=torch.float, requires_grad=True)\n',
    'matmul_shapes':
        'matmul_shapes.tg:4:5: RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)\n'
        '    c = a @ b\n'
        '        ^^^^^\n'
        '提示：a 是 2×3，b 是 2×3（按矩阵看）：矩阵乘法要求左边的列数（3）等于右边的行数（2）。\n'
        '      b.T 是 3×2：你是不是想先把它转置？\n',
    'matrix_vector_shapes':
        'matrix_vector_shapes.tg:4:7: RuntimeError: size mismatch, got input (2), mat (2x3), vec (2)\n'
        '    print(torch.mv(m, v))\n'
        '          ^^^^^^^^^^^^^^\n'
        '提示：m 是 2×3，v 有 2 个元素：矩阵乘向量要求矩阵的列数（3）等于向量的长度。\n',
    'vector_dot_shapes':
        'vector_dot_shapes.tg:4:7: RuntimeError: inconsistent tensor size, expected tensor [3] and src [2] to have the same number of elements, but got 3 and 2 elements respectively\n'
        '    print(a @ b)\n'
        '          ^^^^^\n'
        '提示：a 有 3 个元素，b 有 2 个：两个向量的点积要求长度相同。\n',
    'linear_input_size':
        'linear_input_size.tg:4:7: RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x5 and 2x3)\n'
        '    out = layer(torch.ones(4, 5))\n'
        '          ^^^^^^^^^^^^^^^^^^^^^^^\n'
        '提示：输入最后一维的大小是 5，但这一层接受 2 个特征（nn.Linear(in_features=2, ...)）：请调整输入的形状，或者修改 in_features。\n',
    'broadcast_shapes':
        'broadcast_shapes.tg:4:7: RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0\n'
        '    print(a + b)\n'
        '          ^^^^^\n'
        '提示：逐元素运算从最后一维开始对齐形状（广播）：每一对维度的大小必须相等，或者其中一个为 1。这里 a 在这一维是 2，b 是 3。\n',
    'nonleaf_grad_warning':
        "nonleaf_grad_warning.tg:6: UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.\n"
        '  print(y.grad)\n'
        '提示：y 不是叶子节点（它是由其他张量计算出来的），所以 backward() 不会保留它的 .grad，读到的是 None。\n'
        '      在 backward() 之前调用 y.retain_grad() 就能保留它；或者去读你用 requires_grad=True 创建的那个叶子节点的 .grad。\n',
    'unused_leaf_grad_none':
        "unused_leaf_grad_none.tg:5:1: AttributeError: 'NoneType' object has no attribute 'zero_'\n"
        '    w.grad.zero_()\n'
        '    ^^^^^^^^^^^^\n'
        '提示：w.grad 是 None。backward() 没有到达 w：它没有参与计算调用 backward() 的那个张量，或者被 detach() 或 torch.no_grad() 切断了，又或者 backward() 还没有运行。\n',
    'no_requires_grad_grad_none':
        "no_requires_grad_grad_none.tg:4:7: TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'\n"
        '    print(x.grad * 2)\n'
        '          ^^^^^^^^^^\n'
        '提示：x.grad 是 None。x 不需要梯度：创建它时加上 requires_grad=True（或者调用 x.requires_grad_()），然后再使用。\n',
    'fullwidth_semicolon':
        "fullwidth_semicolon.tg:2:18: SyntaxError: invalid character '；' (U+FF1B)\n"
        '    x = torch.ones(2)；\n'
        '                     ^^\n'
        "提示：你是不是想写 ';'？'；'（全角分号）是中文输入法打出的符号；写代码时请切换到英文（半角）标点。\n"
        '      换成英文标点后，这一行是：x = torch.ones(2);\n',
    'fullwidth_parens_comma':
        "fullwidth_parens_comma.tg:2:17: SyntaxError: invalid character '（' (U+FF08)\n"
        '    x = torch.tensor（[1.0，2.0]）\n'
        '                    ^^\n'
        "提示：你是不是想写 '('？'（'（全角左括号）是中文输入法打出的符号；写代码时请切换到英文（半角）标点。\n"
        '      换成英文标点后，这一行是：x = torch.tensor([1.0,2.0])\n',
    'fullwidth_colon':
        "fullwidth_colon.tg:2:18: SyntaxError: invalid character '：' (U+FF1A)\n"
        '    for i in range(2)：\n'
        '                     ^^\n'
        "提示：你是不是想写 ':'？'：'（全角冒号）是中文输入法打出的符号；写代码时请切换到英文（半角）标点。\n"
        '      换成英文标点后，这一行是：for i in range(2):\n',
    'chinese_quotes':
        "chinese_quotes.tg:2:7: SyntaxError: invalid character '“' (U+201C)\n"
        '    print(“梯度”)\n'
        '          ^\n'
        '提示：你是不是想写 \'"\'？\'“\'（中文左双引号）是中文输入法打出的符号；写代码时请切换到英文（半角）标点。\n'
        '      换成英文标点后，这一行是：print("梯度")\n',
    'ideographic_space':
        'ideographic_space.tg:2:6: SyntaxError: invalid non-printable character U+3000\n'
        '    x = 1\u3000+ 2\n'
        '         ^^\n'
        "提示：你是不是想写 ' '？'\u3000'（全角空格）是中文输入法打出的符号；写代码时请切换到英文（半角）标点。\n"
        '      换成英文标点后，这一行是：x = 1 + 2\n',
    'caret_under_cjk':
        "caret_under_cjk.tg:3:13: AttributeError: 'Tensor' object has no attribute 'gard'\n"
        '    print("梯度", x.gard)\n'
        '                  ^^^^^^\n'
        "提示：你是不是想写：'grad'？\n",
    'attribute_called':
        "attribute_called.tg:3:7: TypeError: 'bool' object is not callable\n"
        '    print(x.is_leaf())\n'
        '          ^^^^^^^^^^^\n'
        '提示：x.is_leaf 是一个值（bool），不是方法：去掉 ()，直接写 x.is_leaf。\n',
    'layer_keyword_typo':
        "layer_keyword_typo.tg:3:9: TypeError: Linear.__init__() got an unexpected keyword argument 'bais'\n"
        '    layer = nn.Linear(2, 3, bais=False)\n'
        '            ^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
        "提示：你是不是想写：'bias'？\n",
    'unsupported_linalg':
        'unsupported_linalg.tg:3:5: NotImplementedError: torch.linalg.inv is not supported by autodiff\n'
        '    B = torch.linalg.inv(A)\n'
        '        ^^^^^^^^^^^^^^^^^^^\n'
        '提示：autodiff 还不支持这个功能（Python 或 PyTorch 有）：这是本工具的限制，不是程序写错了。docs/language.md 的“Not supported”一节列出了 .tg 程序还不能用的功能。\n',
    'unsupported_optimizer':
        'unsupported_optimizer.tg:4:7: NotImplementedError: torch.optim.LBFGS is not supported by autodiff\n'
        '    opt = optim.LBFGS([w])\n'
        '          ^^^^^^^^^^^^^^^^\n'
        '提示：autodiff 还不支持这个功能（Python 或 PyTorch 有）：这是本工具的限制，不是程序写错了。docs/language.md 的“Not supported”一节列出了 .tg 程序还不能用的功能。\n',
    'cuda_device':
        'cuda_device.tg:3:5: AssertionError: Torch not compiled with CUDA enabled\n'
        '    y = x.cuda()\n'
        '        ^^^^^^^^\n'
        '提示：autodiff 只在 CPU 上计算，就像没有 CUDA 的 PyTorch 一样。去掉 .cuda() 和 .to("cuda")，或者像教程里那样选择设备：device = "cuda" if torch.cuda.is_available() else "cpu"。\n',
    'math_on_tensor':
        "math_on_tensor.tg:5:1: AttributeError: 'float' object has no attribute 'backward'\n"
        '    y.backward()\n'
        '    ^^^^^^^^^^\n'
        '提示：y 是一个 Python 数（float），不是张量，所以 autograd 看不到它是怎么算出来的：它来自 torch 之外（math.sin、.item()、float() 等）。请对张量使用 torch 的函数来计算（torch.sin、torch.exp 等）。\n',
    'integer_requires_grad_later':
        'integer_requires_grad_later.tg:3:1: RuntimeError: only Tensors of floating point and complex dtype can require gradients\n'
        '    x.requires_grad = True\n'
        '    ^^^^^^^^^^^^^^^\n'
        '提示：梯度只能对浮点数求，而这个张量存的是整数（写成 1. 而不是 1，或者传入 dtype=torch.float）。\n',
}
