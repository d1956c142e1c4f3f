"""The executor: runs level-2 devplan programs on a `Runtime` (see ARCHITECTURE.md).

`Program(module, kernel_backend)` compiles a level-2 module once; `program.run(inputs)`
runs its entry function (`devplan.execute` lowers a level-1 module first and keeps one
program per module and backend: `devplan/execution.py`). A run:

1. **Compile** (once, `program.py`). Every `func.func` becomes closures, one step per op;
   the `device` ops compile to steps that call the DeviceAPI of their device
   (`device_ops.py`); each `device.launch` compiles its kernel on first use and knows
   statically which arguments the kernel stores to (`launch.py`).
2. **Bind inputs** (`inputs.py`). NumPy arrays become host memory or a buffer on the
   device of the argument's memory space; Python scalars run-time values of the
   argument's type.
3. **Run.** Synchronous copies and launches block (run on the device's default
   stream); `async` ones go on streams of the device that performs them — one
   compute stream per device for launches, one stream per copy direction (as one
   copy engine per direction of a link) — ordered after their dependency tokens (a
   token is the runtime's stream token; `device.wait` waits for the given tokens,
   or for everything when given none). Each launch declares its cost-model time
   (`kernel_cost`, from the one cost model of `system/cost.py`), copies get theirs from
   the system's links. The runtime defers async work until something needs it and
   checks every ordering: host reads of memory with a pending async write, unordered
   async accesses to one buffer (races), use after free, double free, out of memory,
   buffers of another device. Each such error is re-raised at the op that caused it
   (`file:line:col: error: 'device.launch' ...`). A blocking launch that repeats its
   op's last launch skips the checks that launch passed (`launch.py`).
4. **Finish.** Results are copied to host NumPy values; the driver frees the device
   buffers it made for arguments and results; every stream is synchronised; buffers
   still live are leaks, listed in the report (an error with `strict=True`).

The run's state is an `Execution` and what it gives back an `ExecutionResult`
(`state.py`).
"""

from .inputs import find_entry, random_inputs, record_source_type, signature, source_type
from .program import KERNEL_BACKENDS, Program, check_kernel_backend
from .state import ExecutionResult, system_for

__all__ = [
    "KERNEL_BACKENDS",
    "ExecutionResult",
    "Program",
    "check_kernel_backend",
    "find_entry",
    "random_inputs",
    "record_source_type",
    "signature",
    "source_type",
    "system_for",
]
