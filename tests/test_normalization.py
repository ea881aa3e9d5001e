"""batch_norm / layer_norm and their modules against live torch: values, running statistics
and gradients bit for bit where the kernels are reproduced, else within float32 rounding."""

import numpy as np
import pytest

from autodiff.engine.api import functional as F
from autodiff.engine.api import nn, torch as ad

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _cases(seed: int, count: int):
    rng = np.random.default_rng(seed)
    for k in range(count):
        kind = k % 3
        if kind == 0:
            shape = (int(rng.integers(2, 40)), int(rng.integers(1, 20)))
        elif kind == 1:
            shape = (int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(2, 30)))
        else:
            shape = tuple(int(n) for n in rng.integers(1, 6, 3)) + (int(rng.integers(2, 6)),)
        c = shape[1]
        yield (bool(rng.integers(0, 2)),
               (rng.standard_normal(shape) * rng.uniform(0.1, 5) + rng.uniform(-3, 3)
                ).astype(np.float32),
               rng.standard_normal(shape).astype(np.float32),
               rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32),
               rng.standard_normal(c).astype(np.float32), rng.uniform(0.5, 2, c).astype(np.float32))


def _both(x, g, w, b):
    ours = [ad.tensor(v.tolist(), requires_grad=True) for v in (x, w, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (x, w, b)]
    return ours, theirs, ad.tensor(g.tolist()), torch.tensor(g)


def test_batch_norm_matches_torch_bits():
    cases = exact = 0
    for training, x, g, w, b, rm, rv in _cases(5, 120):
        (ox, ow, ob), (tx, tw, tb), og, tg = _both(x, g, w, b)
        orm, orv = ad.tensor(rm.tolist()), ad.tensor(rv.tolist())
        trm, trv = torch.tensor(rm), torch.tensor(rv)
        oy = F.batch_norm(ox, orm, orv, ow, ob, training, 0.1, 1e-5)
        ty = TF.batch_norm(tx, trm, trv, tw, tb, training, 0.1, 1e-5)
        oy.backward(og)
        ty.backward(tg)
        pairs = [(oy.detach(), ty.detach()), (orm, trm), (orv, trv), (ox.grad, tx.grad),
                 (ow.grad, tw.grad), (ob.grad, tb.grad)]
        for ours, theirs in pairs:
            np.testing.assert_allclose(np.asarray(ours.tolist(), np.float32), theirs.numpy(),
                                       rtol=1e-4, atol=1e-5)
        cases += 1
        exact += all(np.array_equal(np.asarray(o.tolist(), np.float32), t.numpy())
                     for o, t in pairs)
    assert exact >= cases - 3, f"{exact} of {cases} bit-exact"


def test_layer_norm_forward_bits_and_gradients():
    rng = np.random.default_rng(0)
    for _ in range(40):
        m, n = int(rng.integers(1, 9)), int(rng.integers(1, 70))
        x = (rng.standard_normal((m, n)) * 2 + 1).astype(np.float32)
        g = rng.standard_normal((m, n)).astype(np.float32)
        w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        (ox, ow, ob), (tx, tw, tb), og, tg = _both(x, g, w, b)
        oy, ty = F.layer_norm(ox, (n,), ow, ob), TF.layer_norm(tx, (n,), tw, tb)
        assert np.array_equal(np.asarray(oy.tolist(), np.float32), ty.detach().numpy())
        oy.backward(og)
        ty.backward(tg)
        assert np.array_equal(np.asarray(ow.grad.tolist(), np.float32), tw.grad.numpy())
        assert np.array_equal(np.asarray(ob.grad.tolist(), np.float32), tb.grad.numpy())
        np.testing.assert_allclose(np.asarray(ox.grad.tolist(), np.float32), tx.grad.numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_modules_print_and_track_as_torch():
    for make in (lambda m: m.BatchNorm1d(4, momentum=None, bias=False),
                 lambda m: m.BatchNorm2d(3, affine=False, track_running_stats=False),
                 lambda m: m.LayerNorm((2, 3), elementwise_affine=False),
                 lambda m: m.LayerNorm(5, eps=1e-3, bias=False)):
        assert repr(make(nn)) == repr(make(torch.nn))
    ours, theirs = nn.BatchNorm1d(3, momentum=None), torch.nn.BatchNorm1d(3, momentum=None)
    rng = np.random.default_rng(1)
    for k in range(3):
        x = (rng.standard_normal((5, 3, 2)) * (k + 1)).astype(np.float32)
        ours(ad.tensor(x.tolist()))
        theirs(torch.tensor(x))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.num_batches_tracked.item() == theirs.num_batches_tracked.item() == 3
    np.testing.assert_array_equal(np.asarray(ours.running_var.tolist(), np.float32),
                                  theirs.running_var.numpy())
    ours.eval()
    theirs.eval()
    x = rng.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(ours(ad.tensor(x.tolist())).tolist(), np.float32),
                                  theirs(torch.tensor(x)).detach().numpy())


@pytest.mark.parametrize("call, error", [
    (lambda m, f, t: f.batch_norm(t.randn(4, 3), None, None), RuntimeError),
    (lambda m, f, t: f.batch_norm(t.randn(1, 3), None, None, training=True), ValueError),
    (lambda m, f, t: f.batch_norm(t.randn(4, 3), t.zeros(2), t.ones(2)), RuntimeError),
    (lambda m, f, t: m.BatchNorm1d(3)(t.randn(3)), ValueError),
    (lambda m, f, t: m.BatchNorm2d(3)(t.randn(2, 3)), ValueError),
    (lambda m, f, t: f.layer_norm(t.randn(4, 3), (4,)), RuntimeError),
])
def test_refusals_are_torchs(call, error):
    messages = []
    for m, f, t in ((nn, F, ad), (torch.nn, TF, torch)):
        with pytest.raises(error) as caught:
            call(m, f, t)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
