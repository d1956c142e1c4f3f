"""Launches that meet through atomics run at once; the watchdog stops a wait that never
ends; when launches running at once fault, the first in program order is reported."""

# ruff: noqa: E501  (IR lines in test programs are long)
from __future__ import annotations

import os
import select
import signal
import time

import numpy as np
import pytest

import devplan
from devplan.diagnostics import DevplanError
from devplan.runtime.kernels.common import KernelError

# @meet adds one to the turn counter, waits until it reaches %goal, then stores into
# %out[%at] (out of bounds when %at >= 2). Two launches on independent streams meet
# through %turn only, so they run at once.
PROGRAM = """
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @meet(%turn: memref<i32>, %out: memref<2xi32>, %at: index, %goal: i32) kernel {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %mine = memref.atomic_rmw addi %c1, %turn[] : (i32, memref<i32>) -> i32
      scf.while : () -> () {
        %now = memref.atomic_rmw addi %c0, %turn[] : (i32, memref<i32>) -> i32
        %waiting = arith.cmpi slt, %now, %goal : i32
        scf.condition(%waiting)
      } do {
        scf.yield
      }
      memref.store %mine, %out[%at] : memref<2xi32>
      gpu.return
    }
  }
  func.func @main(%at_a: index, %goal_a: i32, %at_b: index, %goal_b: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : index
    %turn = gpu.alloc host_shared () : memref<i32>
    memref.store %c0, %turn[] : memref<i32>
    %out_a = gpu.alloc () : memref<2xi32>
    %out_b = gpu.alloc () : memref<2xi32>
    %s0 = gpu.wait async
    %s1 = gpu.wait async
    %a = gpu.launch_func async [%s0] @k::@meet blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%turn : memref<i32>, %out_a : memref<2xi32>, %at_a : index, %goal_a : i32)
    %b = gpu.launch_func async [%s1] @k::@meet blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%turn : memref<i32>, %out_b : memref<2xi32>, %at_b : index, %goal_b : i32)
    gpu.wait [%a, %b]
    %seen = memref.load %turn[] : memref<i32>
    vector.print %seen : i32
    gpu.dealloc %turn : memref<i32>
    gpu.dealloc %out_a : memref<2xi32>
    gpu.dealloc %out_b : memref<2xi32>
    return
  }
}
"""

# One launch that waits for a turn no other launch gives.
ALONE = """
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @wait_forever(%flag: memref<i32>) kernel {
      %c0 = arith.constant 0 : i32
      scf.while : () -> () {
        %now = memref.atomic_rmw addi %c0, %flag[] : (i32, memref<i32>) -> i32
        %waiting = arith.cmpi eq, %now, %c0 : i32
        scf.condition(%waiting)
      } do {
        scf.yield
      }
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : index
    %flag = gpu.alloc host_shared () : memref<i32>
    memref.store %c0, %flag[] : memref<i32>
    gpu.launch_func @k::@wait_forever blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%flag : memref<i32>)
    gpu.dealloc %flag : memref<i32>
    return
  }
}
"""

BACKENDS = ["numpy", "numba"]


def run(source: str, inputs: list[object], backend: str) -> None:
    module = devplan.parse(source)
    devplan.apply(module, "convert-gpu-to-device")
    devplan.execute(module, inputs, entry="main", kernel_backend=backend)


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


@pytest.mark.parametrize("backend", BACKENDS)
def test_launches_that_wait_for_each_other_through_atomics_run_at_once(
    backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run(PROGRAM, [0, 2, 1, 2], backend)
    assert capsys.readouterr().out == "2\n"


def test_watchdog_of_a_forked_child_stops_a_wait_that_never_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The parent's run starts the watchdog's monitor thread, which a forked child lacks.
    monkeypatch.setenv("DEVPLAN_KERNEL_TIMEOUT", "0.3")
    with pytest.raises(KernelError):
        run(ALONE, [], "numpy")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its outcome through the pipe, never return to pytest
        outcome = b"no error"
        try:
            run(ALONE, [], "numpy")
        except KernelError as e:
            outcome = str(e).splitlines()[0].encode()
        finally:
            os.write(write_end, outcome)
            os._exit(0)
    os.close(write_end)
    ready, _, _ = select.select([read_end], [], [], 30)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert ready, "the forked child's wait was never stopped"
    assert b"this scf.while was still looping after 0.3 s" in os.read(read_end, 4096)
    os.close(read_end)


@pytest.mark.parametrize("backend", BACKENDS)
def test_watchdog_stops_a_wait_that_never_ends_with_an_error_at_the_loop(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEVPLAN_KERNEL_TIMEOUT", "0.3")
    began = time.perf_counter()
    with pytest.raises(KernelError) as e:
        run(ALONE, [], backend)
    assert time.perf_counter() - began < 30
    message = str(e.value)
    first = message.splitlines()[0]
    assert first.startswith(f"<unknown>:{line_of(ALONE, 'scf.while')}:7: error: ") or (
        f":{line_of(ALONE, 'scf.while')}:7: error: " in first
    )
    assert "in kernel @wait_forever: this scf.while was still looping after 0.3 s" in first
    assert "(DEVPLAN_KERNEL_TIMEOUT)" in first
    assert "(block (0, 0, 0), thread (0, 0, 0))" in first
    assert "@k::@wait_forever launched here" in message


@pytest.mark.parametrize("backend", BACKENDS)
def test_faults_of_launches_running_at_once_report_the_first_in_program_order(
    backend: str,
) -> None:
    # Both meet, then both store out of bounds (launch a at index 5, b at index 7): the
    # report is a's, whichever faulted first in time.
    for _ in range(3):
        with pytest.raises(KernelError) as e:
            run(PROGRAM, [5, 2, 7, 2], backend)
        first = str(e.value).splitlines()[0]
        assert f":{line_of(PROGRAM, 'memref.store %mine')}:7: error: in kernel @meet:" in first
        assert "index [5] is outside shape (2)" in first


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fault_stops_the_launch_waiting_for_it(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a waits for a third turn nobody gives; b faults after the meeting. a is stopped at
    # once (not by the timeout) and b's fault is the one reported.
    monkeypatch.setenv("DEVPLAN_KERNEL_TIMEOUT", "120")
    began = time.perf_counter()
    with pytest.raises(KernelError) as e:
        run(PROGRAM, [0, 3, 7, 2], backend)
    assert time.perf_counter() - began < 60
    first = str(e.value).splitlines()[0]
    assert "index [7] is outside shape (2)" in first
    assert "watchdog" not in str(e.value)


@pytest.mark.parametrize("value", ["soon", "0", "-1", "inf"])
def test_kernel_timeout_must_be_a_positive_number_of_seconds(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEVPLAN_KERNEL_TIMEOUT", value)
    with pytest.raises(DevplanError) as e:
        run(ALONE, [], "numpy")
    # placed at the launch that needed the watchdog
    assert (
        str(e.value)
        .splitlines()[0]
        .endswith(
            f"error: 'device.launch' DEVPLAN_KERNEL_TIMEOUT={value!r} is not a positive number "
            "of seconds; set it to e.g. 60 (the default)"
        )
    )


def test_numba_atomics_do_not_lose_updates_when_blocks_run_in_parallel() -> None:
    # 2^17 threads, each adding one: enough for the numba backend to run blocks on
    # several threads; a plain read-modify-write there would lose updates.
    source = """
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @count(%n: memref<1xi64>, %out: memref<131072xi64>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : i64
      %b = gpu.block_id x
      %d = gpu.block_dim x
      %t = gpu.thread_id x
      %i0 = arith.muli %b, %d : index
      %i = arith.addi %i0, %t : index
      %old = memref.atomic_rmw addi %c1, %n[%c0] : (i64, memref<1xi64>) -> i64
      memref.store %old, %out[%i] : memref<131072xi64>
      gpu.return
    }
  }
  func.func @main() -> (memref<1xi64>, memref<131072xi64>) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %c512 = arith.constant 512 : index
    %zero = arith.constant 0 : i64
    %c0 = arith.constant 0 : index
    %n = memref.alloc() : memref<1xi64>
    memref.store %zero, %n[%c0] : memref<1xi64>
    %out = memref.alloc() : memref<131072xi64>
    %dn = gpu.alloc () : memref<1xi64>
    %dout = gpu.alloc () : memref<131072xi64>
    gpu.memcpy %dn, %n : memref<1xi64>, memref<1xi64>
    gpu.launch_func @k::@count blocks in (%c512, %c1, %c1) threads in (%c256, %c1, %c1) args(%dn : memref<1xi64>, %dout : memref<131072xi64>)
    gpu.memcpy %n, %dn : memref<1xi64>, memref<1xi64>
    gpu.memcpy %out, %dout : memref<131072xi64>, memref<131072xi64>
    gpu.dealloc %dn : memref<1xi64>
    gpu.dealloc %dout : memref<131072xi64>
    return %n, %out : memref<1xi64>, memref<131072xi64>
  }
}
"""
    module = devplan.parse(source)
    devplan.apply(module, "convert-gpu-to-device")
    n, out = devplan.execute(module, [], entry="main", kernel_backend="numba").outputs
    assert n[0] == 512 * 256
    assert np.array_equal(np.sort(out), np.arange(512 * 256))


BARRIER_AND_WHILE = """
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @halve(%out: memref<4xi32>) kernel {
      %t = gpu.thread_id x
      %c1 = arith.constant 1 : i32
      %c40 = arith.constant 40 : i32
      gpu.barrier
      %n = scf.while (%v = %c40) : (i32) -> i32 {
        %big = arith.cmpi sgt, %v, %c1 : i32
        scf.condition(%big) %v : i32
      } do {
      ^bb0(%w: i32):
        %half = arith.shrsi %w, %c1 : i32
        scf.yield %half : i32
      }
      memref.store %n, %out[%t] : memref<4xi32>
      gpu.return
    }
  }
  func.func @main() -> memref<4xi32> {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %out = memref.alloc() : memref<4xi32>
    %d = gpu.alloc () : memref<4xi32>
    gpu.launch_func @k::@halve blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%d : memref<4xi32>)
    gpu.memcpy %out, %d : memref<4xi32>, memref<4xi32>
    gpu.dealloc %d : memref<4xi32>
    return %out : memref<4xi32>
  }
}
"""


def test_scf_while_in_a_kernel_with_barriers_runs_on_both_backends() -> None:
    for backend in BACKENDS:
        module = devplan.parse(BARRIER_AND_WHILE)
        devplan.apply(module, "convert-gpu-to-device")
        (out,) = devplan.execute(module, [], entry="main", kernel_backend=backend).outputs
        assert out.tolist() == [1, 1, 1, 1], backend


@pytest.mark.parametrize("backend", BACKENDS)
def test_launches_meeting_in_registered_host_memory_run_at_once(
    backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The counter is a host array (gpu.host_register) rather than a device buffer.
    source = PROGRAM.replace(
        "%turn = gpu.alloc host_shared () : memref<i32>",
        "%turn = memref.alloc() : memref<i32>\n"
        "    %cast = memref.cast %turn : memref<i32> to memref<*xi32>\n"
        "    gpu.host_register %cast : memref<*xi32>",
    ).replace("gpu.dealloc %turn : memref<i32>", "memref.dealloc %turn : memref<i32>")
    assert "gpu.host_register" in source
    assert "memref.dealloc %turn" in source
    run(source, [0, 2, 1, 2], backend)
    assert capsys.readouterr().out == "2\n"


# Thread 0 waits for a flag thread 1 sets before its own wait: the threads of one launch.
SAME_LAUNCH = """
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @wait_for_neighbour(%flag: memref<i32>) kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : i32
      %zero = arith.constant 0 : i32
      %second = arith.cmpi ne, %t, %c0 : index
      scf.if %second {
        %old = memref.atomic_rmw assign %c1, %flag[] : (i32, memref<i32>) -> i32
      }
      scf.while : () -> () {
        %now = memref.atomic_rmw addi %zero, %flag[] : (i32, memref<i32>) -> i32
        %waiting = arith.cmpi eq, %now, %zero : i32
        scf.condition(%waiting)
      } do {
        scf.yield
      }
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %flag = gpu.alloc host_shared () : memref<i32>
    memref.store %c0, %flag[] : memref<i32>
    gpu.launch_func @k::@wait_for_neighbour blocks in (%c1, %c1, %c1) threads in (%c2, %c1, %c1) args(%flag : memref<i32>)
    gpu.dealloc %flag : memref<i32>
    return
  }
}
"""


def test_a_thread_waiting_for_a_later_thread_of_its_launch_ends_only_in_lockstep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The NumPy backend runs the lanes op by op (thread 1's store comes before either
    # wait); the Numba backend runs thread 0 to its end first, so it waits forever and
    # the watchdog names it.
    monkeypatch.setenv("DEVPLAN_KERNEL_TIMEOUT", "0.3")
    run(SAME_LAUNCH, [], "numpy")
    with pytest.raises(KernelError) as e:
        run(SAME_LAUNCH, [], "numba")
    first = str(e.value).splitlines()[0]
    assert f":{line_of(SAME_LAUNCH, 'scf.while')}:7: error: in kernel @wait_for_neighbour:" in first
    assert "was still looping after 0.3 s" in first
    assert first.endswith("(block (0, 0, 0), thread (0, 0, 0))")
