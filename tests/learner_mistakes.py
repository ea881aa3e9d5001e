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
]
