"""Engine bugs the program generator steers away from while they are open.

A name in KNOWN_BUGS switches off the generator's paths that reach that bug (grep tests/ for
the name); remove it once the engine is fixed, and the generator reaches the feature again.
Each bug's minimal program, with PyTorch's output and autodiff's, is in the helper's
findings note of issue 11 (B* names: bugs found by the first generator, whose own notes were
lost; I11_* names: issue 11's items; C* names: classes the widened generator found).
"""

KNOWN_BUGS: set[str] = {
    # an in-place change of a view of a tensor requiring grad is refused (documented), and
    # with it `t[k] += v` on such a tensor (Python changes the view t[k] in place) and writes
    # into the result of 1-D @ 2-D (a view: torch squeezes the product)
    "B26_view_inplace",
    # 2-D @ 3-D shape errors worded as mm's (torch: "Expected size for first two dimensions
    # of batch2 tensor ..."); fixed once, back since main a8a893c
    "B25",
    # create_graph gradients are built from other ops than torch's derivative formulas, so
    # their grad_fn names and graphs differ (on ca316d1: mm's gradient for mat2, prod's with a
    # zero input); their values are still compared
    "I11_2_create_graph_names",
    # 3-D @ 3-D with a batch of one: BmmBackward0 under UnsafeViewBackward0 in torch, Mm here
    "C6b_bmm_batch_one",
    # a bad keyword to a torch function: torch's "received an invalid combination of
    # arguments" / "missing 1 required positional arguments", here Python's wording
    "C11_bad_keywords",
    # the gradient of elements a write overwrote is -0. where torch gives +0. (zeros)
    "R1_overwritten_grad_sign",
    # second derivatives through log_softmax / cross_entropy have wrong values
    "R2_log_softmax_second_derivative",
    # the version-counter error names "CopySlices", torch "torch::autograd::CopySlices"
    "R4_copyslices_version_message",
    # new on ca316d1: t[k] = v with a basic index views v even when v has the slot's shape
    # (torch views it only when the shapes differ; index_put always)
    "C5b_setitem_view_same_shape",
    # a view of a leaf that is itself a view (t.reshape(...).requires_grad_()), taken under
    # no_grad, requires grad here; not in torch
    "B35b_nograd_view_of_view_leaf",
    # x[x > c] = v on a 0-d leaf that requires grad: torch's message says "a view of a leaf"
    "C15_zero_dim_mask_write",
    # a second backward through a write (CopySlices) over a graph that saved nothing else is
    # not refused; torch frees CopySlices's state like any saved tensor
    "C8b_copyslices_freed",
    # the second derivative of prod() with create_graph=True where an element is zero is
    # refused ("beyond the second")
    "B38b_prod_zero_second",
    # the sign of zero in 1-D @ 3-D and 2-D @ 3-D products and gradients: a one-term
    # product 0.75 * -0. stays -0. here, +0. in torch (its kernels add it to a zero); fixed
    # once for some shapes, open again on ca316d1
    "B29_matmul_neg_zero",
    # maximum/minimum/min()/max() where 0. meets -0.: which one torch returns depends on its
    # kernel (the vectorised one, for 8 elements or more, returns the other operand than the
    # scalar one); the fix on ca316d1 follows the scalar kernel only
    "C13_signed_zero_ties",
    # torch quirk: after stack (unbind) of an expanded gradient, the leaves' .grad alias one
    # element, so a second backward adds into it twice (-3 where -2 is right); not emulated
    "C16_aliased_grad_accumulation",
}
# Fixed by the lead and re-enabled: B1-B24, B27-B38 (B25 came back), issue 11's items 1, 3-9,
# and the classes the widened generator found: C1 (folded matmul errors), C2 (nll's target
# input), C3 ((None, 0) inputs of backward-formula nodes), C4 (Tensor.where), C5 (a written
# value's view), C6 (bmm under UnsafeView), C8 (saved indices freed), C9 (outer's view),
# C11 (attribute-write checks, dtype checks, arange bounds, messages), C12, C13, C14 (signs
# of zero and prod's gradient) -- all on main ca316d1.  Their generator paths stay (grep the
# names) so that a flag can be set again should one come back.
# (B13, AsStridedBackward0 after an in-place change through detach() of a view, is not generated.)
# Torch behaviour deliberately not tested: abs's second derivative is a tensor whose
# tolist() raises "unallocated storage" in torch 2.13.
