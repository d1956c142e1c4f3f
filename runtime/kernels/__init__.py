"""Kernel backends: compile a `kernel.func` once, then launch it over NumPy arrays.

```python
from devplan.runtime.kernels.compile import compile_kernel
add = compile_kernel(func, "numpy")          # or "numba", or "numba-cuda" (a GPU)
add(grid=(4, 1, 1), block=(256, 1, 1), args=[a, b, c])
```

The backends give the same results:

* `numpy` — the reference: vectorised SIMT emulation, every IR op once over the lanes of
  the whole grid (or of a box of blocks in lockstep when the kernel has barriers or
  shared memory); see `numpy_backend.py` and `lanes.py`.
* `numba` — the fast path: explicit loops over blocks and threads compiled by
  `numba.njit`; kernels with barriers run phase by phase per block; see `numba_backend.py`
  (compiling and launching), `numba_source.py` (the loops), `numba_ops.py` (each op's
  code), `phases.py` and `index_values.py` (what decides the loops' shape).
* `numba-cuda` — a `numba.cuda.jit` kernel, one CUDA thread per thread, on an NVIDIA GPU
  (or Numba's CUDA simulator); it takes `numba.cuda` device arrays as well as NumPy
  arrays; see `cuda_backend.py`.

They compile the IR once per kernel op (no IR walking per launch): `compile.py` holds the
table of backends and `compile_kernel`, `launch.py` the compiled kernel and the checks of
its launches (`KernelError` is in `common.py`). Faults at run time — out-of-bounds loads
and stores, integer division by zero, a barrier not every thread of a block reaches — are
`KernelError`s placed at the op that names the kernel, the block and thread, and the
buffer; nothing is clamped or wrapped around.

Integer semantics: `index` and `i64` are 64-bit two's complement and `i32` wraps at 32
bits, as in hardware (every path computes the binary integer ops with `semantics`' one
definition); conversions of NaN or out-of-range floats to integers are errors.
"""
