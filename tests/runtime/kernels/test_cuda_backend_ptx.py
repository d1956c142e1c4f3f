"""The `numba-cuda` backend's kernels compile for a real GPU: every example's kernels and
every scalar op, to PTX for sm_80, through NVIDIA's NVVM, without a GPU.

Runs only where NVVM and NVRTC are installed (`pip install 'numba-cuda[cu12]'`, about 400 MB; not a
test dependency); elsewhere it is skipped. The simulator tests cannot show this: the
simulator runs kernels as Python, which accepts code the GPU compiler rejects.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import support
from xdsl.dialects.builtin import MemRefType

import devplan
from devplan.analysis.dtypes import dtype_of
from devplan.dialects.kernel import KernelFuncOp
from devplan.execution import compile_program
from devplan.runtime.kernels.common import Kernel

TESTS = Path(__file__).resolve().parent


def _store_one(a: Any) -> None:
    a[0] = 1


def ptx_compiler_is_installed() -> bool:
    """Whether numba-cuda can compile a kernel to PTX here (it needs NVVM and NVRTC)."""
    try:
        from numba import cuda  # pyright: ignore[reportMissingTypeStubs]

        cuda.compile_ptx(_store_one, "(int64[:],)", cc=(8, 0))
    except Exception:
        return False
    return True


pytestmark = pytest.mark.skipif(
    not ptx_compiler_is_installed(), reason="NVIDIA's NVVM and NVRTC are not installed"
)


def numba_type(type_: Any) -> Any:
    from numba import types  # pyright: ignore[reportMissingTypeStubs]
    from numba.np.numpy_support import from_dtype  # pyright: ignore[reportMissingTypeStubs]

    if isinstance(type_, MemRefType):
        return types.Array(from_dtype(dtype_of(type_.element_type)), len(type_.get_shape()), "C")
    return from_dtype(dtype_of(type_))


def example_kernels() -> list[KernelFuncOp]:
    found: list[KernelFuncOp] = []
    for path in sorted(support.EXAMPLES.glob("*.mlir")):
        if "func.func @main" in path.read_text():
            lowered = compile_program(devplan.parse(path), "numpy").module
            found += [op for op in lowered.walk() if isinstance(op, KernelFuncOp)]
    return found


def op_kernels() -> list[KernelFuncOp]:
    spec = importlib.util.spec_from_file_location("cases", TESTS / "numba_cuda_cases.py")
    assert spec is not None
    assert spec.loader is not None
    cases: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    found: list[KernelFuncOp] = []
    for _name, line, t, r, _inputs in cases.op_lines():
        text = cases.ELEMENTWISE.format(t=t, r=r, line=line)
        found += [op for op in devplan.parse(text).walk() if isinstance(op, KernelFuncOp)]
    for text, _inputs in cases.CASES.values():
        module = devplan.parse(text)
        found += [op for op in module.walk() if isinstance(op, KernelFuncOp) and
                  not any(o.name == "kernel.printf" for o in op.walk())]  # fmt: skip
    for text, _grid, _block, _args in cases.KERNELS.values():
        module = devplan.parse(f'kernel.module @k target #target.target<"cuda"> {{{text}\n}}')
        found += [op for op in module.walk() if isinstance(op, KernelFuncOp)]
    return found


def test_every_example_kernel_and_scalar_op_compiles_to_ptx(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from numba import cuda, types  # pyright: ignore[reportMissingTypeStubs]
    from numba.cuda import dispatcher  # pyright: ignore[reportMissingTypeStubs]

    from devplan.runtime.kernels.cuda_backend import CudaSource

    class SM80:
        compute_capability = (8, 0)

    # Device functions compile for the current GPU's architecture; there is none here.
    monkeypatch.setattr(dispatcher, "get_current_device", SM80)
    kernels = example_kernels() + op_kernels()
    for func in kernels:
        gen = CudaSource(Kernel(func), cuda, simulated=False)
        source = gen.generate()  # adds the functions it calls to the namespace
        namespace = dict(gen.namespace)
        exec(compile(source, f"<{func.sym_name.data}>", "exec"), namespace)
        signature = (types.Array(types.int64, 1, "C"), *map(numba_type, func.param_types))
        ptx, _ = cuda.compile_ptx(namespace["kernel"].py_func, signature, cc=(8, 0))
        assert ".entry" in ptx
    assert len(kernels) > 160
