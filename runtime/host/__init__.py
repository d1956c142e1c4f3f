"""Host code compiled to Python closures: `func`, `arith`, `math`, `scf`, `memref`, `cf.assert`
and MLIR's runner utilities.

The executor turns every function of a level-2 module into Python callables once,
before anything runs, so running a program never walks IR:

* Each SSA value of a function gets a *slot*, an index into a flat Python list (the
  function's *frame*); a call makes a fresh frame, so recursion works. Slot 0 holds
  the execution context (the state of one run), so compiled code is reentrant and a
  compiled program is reused by every run (`frame`).
* Each op becomes a *step*, a closure `step(frame) -> None` that reads its operand
  slots and writes its result slots. A block is its list of steps; a region-holding
  op (`scf.for`, `scf.if`, `scf.while`, `scf.index_switch`) is one step whose closure
  runs the steps of its blocks.
* An op's compiler is found in `ops.HOST_OPS`, a table keyed by op class joined from
  the table of each dialect's module (`arith`, `math`, `scf`, `memref`, `func`, `affine`,
  `vector`; `runner_utils` for calls of MLIR's runner utilities), each module imported
  when host code first holds an op of its dialect; the executor asks it first, then its
  own table of `device` ops, so host and device ops compile the same way.

Run-time values of host code (`values`):

* integers (`index`, `iN`) are Python ints in two's-complement signed form, wrapped
  to their width after every op (MLIR's arith semantics); `i1` is a Python bool;
* floats are NumPy scalars of their width (`np.float16/32/64`), so `f32` arithmetic
  rounds like `f32`; floating-point exceptions follow IEEE (no warnings);
* memrefs in host memory (no memory space) are NumPy arrays; memrefs in a device's
  memory are whatever the executor's `memory` hooks give (runtime buffers).

Nothing is clamped or wrapped silently: an index outside a memref, a division by
zero, a non-positive `scf.for` step, a float-to-integer conversion of NaN or of an
out-of-range value all raise a located `DevplanError`.
"""
