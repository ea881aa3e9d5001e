"""Engine bugs the program generator steers away from while they are open.

A name in KNOWN_BUGS switches off the generator's paths that reach that bug (grep tests/ for
the name); remove it once the engine is fixed, and the generator reaches the feature again.
Each bug's minimal program, with PyTorch's output and autodiff's, is in the helper's
findings note of issue 11 (B* names: bugs found by the first generator, whose own notes were
lost; I11_* names: issue 11's items; C* names: classes the widened generator found).
"""

SIGNED_ZERO_VECTOR = 4  # from this many elements a signed-zero tie may be decided by lanes

KNOWN_BUGS: set[str] = {
    # which zero torch returns where 0. and -0. tie (whole min()/max(), elementwise
    # minimum()/maximum()) depends on its vectorised CPU kernel, measured under torch 2.13 on
    # AVX512: below one vector the scalar loop decides, deterministically (whole max/min: the
    # last of the tied zeros in memory order; maximum/minimum: the first operand), which is
    # also NumPy's choice, so we agree; from 8 float32 / 5 float64 elements (whole) and 16
    # float32 / 8 float64 (elementwise) the lanes' order decides (the vector part takes the
    # second operand, lanes are combined pairwise), and the widths differ by machine (AVX2
    # halves them). Not emulated: the answer is not a property of the program. The generator
    # keeps away from ties only from SIGNED_ZERO_VECTOR elements on (AVX2's smallest width);
    # relu's -0. (torch keeps it at any size) is generated again.
    "C13_signed_zero_ties",
    # torch's AccumulateGrad keeps the incoming gradient itself as a leaf's first .grad (no
    # copy) when grad mode is off (no create_graph), nothing else holds that tensor object,
    # and its strides obey the leaf's layout (equal strides on dims of size > 1, no 0 stride
    # on a size-1 dim; trivially true for a 0-d leaf); a later backward adds into that .grad
    # in place. So 0-d leaves stacked (or unsqueezed and concatenated) into a sum receive
    # 0-d views of one expanded (stride-0) element: both .grad share it, and a second
    # backward adds twice (torch prints 3. where 2. is right); a view of a gradient the
    # program holds (x.view(3).backward(v)) makes x.grad share v's memory. Not emulated:
    # it needs every backward rule to make torch's views (a stride-0 expand, 0-d selects)
    # and torch's tensor reference counts: work on every backward for an aliasing quirk.
    # The generator avoids a second backward only where 0-d leaves meet a stack/cat.
    "C16_aliased_grad_accumulation",
}
# Fixed by the lead and re-enabled: B1-B24, B26-B38 (B25 came back), issue 11's items 1-9, R1,
# R3 (B26's writes into matmul results), C5b, C10 (`t[k] += v`), and the classes the widened generator found: C1 (folded matmul errors), C2 (nll's target
# input), C3 ((None, 0) inputs of backward-formula nodes), C4 (Tensor.where), C5 (a written
# value's view), C6 (bmm under UnsafeView), C8 (saved indices freed), C9 (outer's view),
# C11 (attribute-write checks, dtype checks, arange bounds, messages), C12, C13, C14 (signs
# of zero and prod's gradient) -- all on main ca316d1; R1, R3, C5b, I11_2b (mm's layout test)
# and B28b (view of a view leaf) fixed on branch gen.  Their generator paths stay (grep the
# names) so that a flag can be set again should one come back.  I11_2c (prod's create_graph
# graph where an element is zero) and B38b (its second derivative) fixed on branch fid2: prod's
# backward is torch's cumprod/flip formula.  C11_bad_keywords fixed on branch fid2: torch's
# argument-parser messages from one signature table (engine/core/signatures.py).  I11_2d
# (TBackward0 placement, View vs ReshapeAlias in create_graph graphs through matrix products;
# seeds 250863, 500209, 500767) fixed on main: views and unsqueeze take torch's strides for
# size-1 dims, elementwise arithmetic results torch's layout (engine/numerics/layout.py).
# Torch behaviour deliberately not tested: abs's second derivative is a tensor whose
# tolist() raises "unallocated storage" in torch 2.13.
