# big_matmul in bare NumPy: the same data, matmuls, relu, mean and hand-written backward
# as big_matmul.tg, printing the same line. The floor autodiff's big_matmul is held to.
import numpy as np
n = 1024  # size
f32 = np.float32
a = np.arange(n * n, dtype=f32).reshape(n, n) % f32(7) - f32(3)
b = np.arange(n * n, dtype=f32).reshape(n, n) % f32(5) - f32(2)
c = np.arange(n * n, dtype=f32).reshape(n, n) % f32(3) - f32(1)
ab = a @ b
h = np.maximum(ab, f32(0))
hc = h @ c
y = np.maximum(hc, f32(0))
loss = y.mean()
g_y = np.full((n, n), f32(1.0 / (n * n)), dtype=f32) * (hc > 0)
g_h = (g_y @ c.T) * (ab > 0)
a_grad = g_h @ b.T
b_grad = a.T @ g_h
print(f"loss {loss.item():.5g} a.grad {a_grad[0, 0].item():.6g} b.grad {b_grad[1, 2].item():.6g}")
