"""Review fixes in the IR layer: each test pins a user error that used to escape
unlocated, silently, or as a traceback.
"""

# ruff: noqa: E501  (IR lines in test programs are long)
from __future__ import annotations

import pytest

import devplan
from devplan.diagnostics import DevplanError


def error_of(source: str, pipeline: str) -> str:
    module = devplan.parse(source)
    with pytest.raises(DevplanError) as e:
        devplan.apply(module, pipeline)
    return str(e.value)


@pytest.mark.parametrize(
    ("op", "line"),
    [
        ('%t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index', 3),
        ('%g = "gpu.global_id"() <{dimension = #gpu<dim y>}> : () -> index', 3),
        ('"gpu.barrier"() : () -> ()', 3),
    ],
)
def test_kernel_only_gpu_op_in_host_code_is_refused_at_the_op(op: str, line: int) -> None:
    source = f"""
func.func @main() {{
  {op}
  func.return
}}
"""
    name = op.split('"')[1]
    assert error_of(source, "convert-gpu-to-device").startswith(
        f"<string>:{line}:3: error: '{name}' is outside a gpu.func; it can only be converted inside a kernel"
    )
