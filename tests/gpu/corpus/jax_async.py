"""JAX on the stream-ordered allocator (run with XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async): a
jitted training-like loop. Correct: graphcheck must record no error."""
import jax
import jax.numpy as jnp


@jax.jit
def step(w, x):
    loss = lambda w: jnp.mean((jnp.tanh(x @ w) - 1.0) ** 2)
    g = jax.grad(loss)(w)
    return w - 0.1 * g, loss(w)


w = jnp.ones((256, 256), jnp.float32) * 0.01
x = jax.random.normal(jax.random.PRNGKey(0), (128, 256))
for _ in range(20):
    w, l = step(w, x)
print("loss %.4f" % float(l))
print("jax", jax.__version__, jax.devices()[0].platform)
