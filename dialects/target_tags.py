"""Target tags: named configurations such as `nvidia/nvidia-a100`, as data.

TVM's tags (reference §a.8 and TVM's tag tables) and devplan's own AMD ones, each as
TVM's config dict. The tag registry in `dialects/target.py` reads this table the first
time a tag is looked up; users add tags with `register_tag`.
"""

from __future__ import annotations

from typing import Final


def _cuda_tag(arch: str, registers: int = 65536, **extra: object) -> dict[str, object]:
    # TVM_REGISTER_CUDA_TAG(name, arch, shared_mem, regs_per_block)
    return {
        "kind": "cuda",
        "keys": ["cuda", "gpu"],
        "arch": arch,
        "max_shared_memory_per_block": 49152,
        "max_threads_per_block": 1024,
        "thread_warp_size": 32,
        "registers_per_block": registers,
        **extra,
    }


def _jetson_tag(arch: str, host_cpu: str, cores: int) -> dict[str, object]:
    config = _cuda_tag(arch)
    del config["keys"]
    config["host"] = {
        "kind": "llvm",
        "keys": ["arm_cpu", "cpu"],
        "mtriple": "aarch64-linux-gnu",
        "mcpu": host_cpu,
        "num-cores": cores,
    }
    return config


def _metal_tag(threads: int, host_cpu: str) -> dict[str, object]:
    return {
        "kind": "metal",
        "max_threads_per_block": threads,
        "max_shared_memory_per_block": 32768,
        "thread_warp_size": 32,
        "host": {"kind": "llvm", "mtriple": "arm64-apple-macos", "mcpu": host_cpu},
    }


def _hexagon_tag(version: str, vtcm: int, extra_mattr: bool) -> dict[str, object]:
    mattr = [f"+hvx{version}", "+hvx-length128b"]
    if extra_mattr:
        mattr += ["+hvx-qfloat", "-hvx-ieee-fp"]
    config: dict[str, object] = {
        "kind": "hexagon",
        "mtriple": "hexagon",
        "mcpu": f"hexagon{version}",
        "mattr": mattr,
        "num-cores": 4,
        "vtcm-capacity": vtcm,
    }
    if version == "v68":
        config["llvm-options"] = ["-force-hvx-float"]
    return config


def _aws_c5_tag(cores: int, cpu: str) -> dict[str, object]:
    return {"kind": "llvm", "keys": ["x86", "cpu"], "mcpu": cpu, "num-cores": cores}


def _amd_tag(gfx: str, warp: int) -> dict[str, object]:
    # devplan's own: TVM registers no ROCm tags. LDS is 64 KiB per workgroup.
    return {"kind": "rocm", "mcpu": gfx, "thread_warp_size": warp}


_RPI4 = {
    "kind": "llvm",
    "keys": ["arm_cpu", "cpu"],
    "mtriple": "aarch64-linux-gnu",
    "mcpu": "cortex-a72",
    "mattr": ["+neon"],
    "num-cores": 4,
}
_MB: Final = 2**20

BUILTIN_TAGS: Final[dict[str, dict[str, object]]] = {
    # NVIDIA data centre
    "nvidia/nvidia-a100": _cuda_tag("sm_80", l2_cache_size_bytes=41943040),
    "nvidia/nvidia-h100": _cuda_tag("sm_90a", l2_cache_size_bytes=52428800),
    "nvidia/nvidia-a40": _cuda_tag("sm_86"),
    "nvidia/nvidia-a30": _cuda_tag("sm_80"),
    "nvidia/nvidia-a10": _cuda_tag("sm_86"),
    "nvidia/nvidia-a10g": _cuda_tag("sm_86"),
    "nvidia/nvidia-t4": _cuda_tag("sm_75"),
    "nvidia/nvidia-v100": _cuda_tag("sm_70"),
    "nvidia/tesla-p100": _cuda_tag("sm_60"),
    "nvidia/tesla-k80": _cuda_tag("sm_37"),
    # NVIDIA consumer
    "nvidia/geforce-rtx-4090": _cuda_tag("sm_89", l2_cache_size_bytes=75497472),
    "nvidia/geforce-rtx-3090": _cuda_tag("sm_86"),
    "nvidia/geforce-rtx-3080": _cuda_tag("sm_86"),
    "nvidia/geforce-rtx-2080-ti": _cuda_tag("sm_75"),
    "nvidia/geforce-gtx-1080-ti": _cuda_tag("sm_61"),
    # NVIDIA Jetson
    "nvidia/jetson-nano": _cuda_tag("sm_53", registers=32768),
    "nvidia/jetson-tx2": _cuda_tag("sm_62", registers=32768),
    "nvidia/jetson-agx-xavier": _jetson_tag("sm_72", "carmel", 8),
    "nvidia/jetson-orin-nano": _jetson_tag("sm_87", "carmel", 6),
    "nvidia/jetson-agx-orin-32gb": _jetson_tag("sm_87", "cortex-a78", 8),
    "nvidia/jetson-agx-orin-64gb": _jetson_tag("sm_87", "cortex-a78", 12),
    # AMD (devplan's own)
    "amd/instinct-mi250x": _amd_tag("gfx90a", 64),
    "amd/instinct-mi300x": _amd_tag("gfx942", 64),
    "amd/radeon-rx-7900-xtx": _amd_tag("gfx1100", 32),
    # Apple
    "apple/m1-gpu": _metal_tag(1024, "apple-m1"),
    "apple/m1-gpu-restricted": _metal_tag(256, "apple-m1"),
    "apple/m2-gpu": _metal_tag(1024, "apple-m2"),
    # Qualcomm
    "qcom/hexagon-v66": _hexagon_tag("v66", _MB // 4, False),
    "qcom/hexagon-v68": _hexagon_tag("v68", 4 * _MB, True),
    "qcom/hexagon-v69": _hexagon_tag("v69", 8 * _MB, True),
    "qcom/hexagon-v73": _hexagon_tag("v73", 8 * _MB, True),
    "qcom/adreno-opencl": {
        "kind": "opencl",
        "device": "adreno",
        "keys": ["adreno", "opencl", "gpu"],
    },
    "qcom/adreno-vulkan": {
        "kind": "vulkan",
        "device": "adreno",
        "keys": ["adreno", "vulkan", "gpu"],
    },
    # AWS CPUs
    "aws/cpu/c5.large": _aws_c5_tag(1, "skylake-avx512"),
    "aws/cpu/c5.xlarge": _aws_c5_tag(2, "skylake-avx512"),
    "aws/cpu/c5.2xlarge": _aws_c5_tag(4, "skylake-avx512"),
    "aws/cpu/c5.4xlarge": _aws_c5_tag(8, "skylake-avx512"),
    "aws/cpu/c5.9xlarge": _aws_c5_tag(18, "skylake-avx512"),
    "aws/cpu/c5.12xlarge": _aws_c5_tag(24, "cascadelake"),
    "aws/cpu/c5.18xlarge": _aws_c5_tag(36, "skylake-avx512"),
    "aws/cpu/c5.24xlarge": _aws_c5_tag(48, "cascadelake"),
    # Raspberry Pi
    "raspberry-pi/4b-aarch64": {**_RPI4, "host": dict(_RPI4)},
}
"""The built-in tags, as TVM's config dicts."""
