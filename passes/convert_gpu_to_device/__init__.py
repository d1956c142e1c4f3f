"""convert-gpu-to-device: MLIR's `gpu` dialect to devplan's `device` and `kernel`
dialects (`conversion.py`), with its helpers: outlining `gpu.launch` bodies
(`outlining.py`), `gpu.memset` as a kernel (`memset.py`), the refusals checked first
(`checks.py`), host memory the device reaches (`registration.py`) and kernel bodies
(`kernel_lowering.py`)."""

from .conversion import ConvertGpuToDevicePass

__all__ = ["ConvertGpuToDevicePass"]
