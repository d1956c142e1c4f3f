// Constructs of MLIR's gpu dialect that devplan reads but does not convert, and malformed
// ones: one located error each, never an internal error.
// RUN: not devplan-opt %s --allow-unregistered-dialect --split-input-file -p convert-gpu-to-device 2>&1 | filecheck %s

// A gpu.func without a body block (xDSL's verifier failed with an IndexError here).
// CHECK: unsupported_constructs.mlir:[[# @LINE + 2]]:3: error: 'gpu.func' gpu.func @k has no body block
gpu.module @m {
  "gpu.func"() ({}) {function_type = () -> (), sym_name = "k"} : () -> ()
}

// -----

// More workgroup attributions declared than the entry block has arguments for.
// CHECK: unsupported_constructs.mlir:[[# @LINE + 2]]:3: error: 'gpu.func' gpu.func @k takes 1 input(s) and declares 2 workgroup attribution(s), but its entry block has 1 argument(s)
gpu.module @m {
  "gpu.func"() ({
  ^bb0(%a: f32):
    "gpu.return"() : () -> ()
  }) {function_type = (f32) -> (), sym_name = "k", gpu.kernel, workgroup_attributions = 2 : i64} : () -> ()
}

// -----

// CHECK: unsupported_constructs.mlir:[[# @LINE + 2]]:3: error: gpu.func @k has private attributions (memory of each thread); devplan's kernels have no per-thread memory; keep such values in SSA values
gpu.module @m {
  gpu.func @k() private(%p: memref<2xf32, #gpu.address_space<private>>) kernel {
    gpu.return
  }
}

// -----

// CHECK: unsupported_constructs.mlir:[[# @LINE + 2]]:3: error: workgroup attribution memref<2xf32> of gpu.func @k cannot be converted; it needs a static shape and the workgroup memory space (3 or #gpu.address_space<workgroup>)
gpu.module @m {
  gpu.func @k() workgroup(%w: memref<2xf32>) kernel {
    gpu.return
  }
}

// -----

// CHECK: unsupported_constructs.mlir:[[# @LINE + 1]]:1: error: gpu.module @m names compilation targets [#nvvm.target]; devplan compiles its kernels for the device the pass converts to (convert-gpu-to-device{device="cuda:0"}): remove them
gpu.module @m [#nvvm.target] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// An op devplan does not know, in custom form: named, with the way to write it.
func.func @f(%x: f32) {
  // CHECK: unsupported_constructs.mlir:[[# @LINE + 1]]:8: error: 'gpu.subgroup_broadcast' is not an op devplan knows, so it can only be read in generic form ("gpu.subgroup_broadcast"(...) : (...) -> (...))
  %b = gpu.subgroup_broadcast %x, any_lane : f32
  return
}

// -----

func.func @f(%x: f32) {
  // CHECK: unsupported_constructs.mlir:[[# @LINE + 1]]:3: error: 'gpu.rotate' gpu.rotate's width 12 is not a power of two
  %r, %ok = gpu.rotate %x, 3, 12 : f32
  return
}

// -----

// CHECK: unsupported_constructs.mlir:[[# @LINE + 1]]:51: error: unknown GPU address space 'shared'; expected one of global, workgroup, private, constant
func.func @f(%x: memref<4xf32, #gpu.address_space<shared>>) {
  return
}

// -----

// An unregistered op in a kernel is named by its own name, not 'builtin.unregistered'.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%x: f32) kernel {
      // CHECK: unsupported_constructs.mlir:[[# @LINE + 1]]:7: error: 'use' is not allowed in kernel.func @k; kernel bodies may use
      "use"(%x) : (f32) -> ()
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel {
      // CHECK: unsupported_constructs.mlir:[[# @LINE + 1]]:7: error: a gpu.barrier of subgroup scope cannot be converted; kernel.barrier waits for every thread of the block
      gpu.barrier scope <subgroup>
      gpu.return
    }
  }
}

// -----

func.func @f() {
  // CHECK: unsupported_constructs.mlir:[[# @LINE + 1]]:3: error: 'gpu.barrier' a barrier of thread scope means nothing (one thread)
  gpu.barrier scope <thread>
  return
}

// -----

// A gpu.func whose function_type is not a function type (xDSL's verifier failed with an
// AttributeError here).
// CHECK: unsupported_constructs.mlir:[[# @LINE + 2]]:3: error: 'gpu.func' gpu.func @k's function_type is f32, not a function type such as (f32) -> ()
gpu.module @m {
  "gpu.func"() ({
    gpu.return
  }) {sym_name = "k", function_type = f32} : () -> ()
}

// -----

// CHECK: unsupported_constructs.mlir:[[# @LINE + 2]]:3: error: gpu.func @k has argument attributes [{llvm.noalias}]; devplan does not convert them
gpu.module @m {
  gpu.func @k(%a: memref<4xf32> {llvm.noalias}) kernel {
    gpu.return
  }
}

// -----

// CHECK: unsupported_constructs.mlir:[[# @LINE + 1]]:1: error: gpu.module @m names an offloading handler #gpu.select_object<0>; devplan compiles its kernels for the device the pass converts to (convert-gpu-to-device{device="cuda:0"}): remove them
gpu.module @m <#gpu.select_object<0>> {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// A reduction word gpu.all_reduce does not define is named (the parser said only
// "operand expected" before).
gpu.module @m {
  gpu.func @k(%x: f32) kernel {
    // CHECK: unsupported_constructs.mlir:[[# @LINE + 1]]:25: error: 'minimumnumf' is not a reduction devplan knows; gpu.all_reduce takes one of add, mul,
    %r = gpu.all_reduce minimumnumf %x uniform {} : (f32) -> f32
    gpu.return
  }
}

// -----

// A launch whose constant sizes contradict the kernel's known_grid_size.
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel attributes {known_grid_size = array<i32: 2, 1, 1>} {
      gpu.return
    }
  }
  func.func @f() {
    %c1 = arith.constant 1 : index
    // CHECK: unsupported_constructs.mlir:[[# @LINE + 1]]:5: error: 'device.launch' grid (1, 1, 1) has 1 along x, but kernel @m::@k declares known_grid_size = array<i32: 2, 1, 1>: every launch of it must have that grid
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

// -----

// CHECK: unsupported_constructs.mlir:[[# @LINE + 2]]:3: error: 'kernel.func' kernel.func @k: known_block_size is array<i32: 4, 1>; it must be three sizes of at least 1, e.g. array<i32: 128, 1, 1>
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 4, 1>} {
    gpu.return
  }
}

// -----

// CHECK: unsupported_constructs.mlir:[[# @LINE + 2]]:3: error: gpu.func @k gives known_block_size twice, as array<i32: 4, 1, 1> and array<i32: 8, 1, 1> (also as gpu.known_block_size); give it once
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 4, 1, 1>, gpu.known_block_size = array<i32: 8, 1, 1>} {
    gpu.return
  }
}
