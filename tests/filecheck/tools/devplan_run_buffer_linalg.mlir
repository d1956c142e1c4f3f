// Linalg ops on memrefs in host code (MLIR's buffer form) run on the host as loops
// (host-linalg-to-loops): a fill, a 1-D convolution (its window read through
// affine.apply), and a matvec into a rank-reducing subview (a strided column).
// RUN: devplan-run %s | filecheck %s
// RUN: devplan-opt %s -p host-linalg-to-loops | filecheck %s --check-prefix=LOOPS
// RUN: not devplan-run %S/inputs/subview_out_of_bounds.mlir 2>&1 | filecheck %s --check-prefix=BAD

// LOOPS-NOT: linalg.
// LOOPS:     affine.apply affine_map<(d0, d1) -> ((d0 + d1))>

// conv_1d of [1 2 3 4 5] with [1 0 -1]: x[i] - x[i+2] = -2 everywhere.
// CHECK:      Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 1 offset = 0 sizes = [3] strides = [1] data =
// CHECK-NEXT: [-2,  -2,  -2]
// Column 1 of a 2x2 C: A (2x3, all 1) times b = [1 2 3]: 6 in both rows; column 0 stays 0.
// CHECK:      Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 2 offset = 0 sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[}}[0,   6],
// CHECK-NEXT:  [0,   6]]
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %minus = arith.constant -1.0 : f32
  %x = memref.alloc() : memref<5xf32>
  scf.for %i = %c0 to %c5 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %xi = arith.addf %fi, %one : f32
    memref.store %xi, %x[%i] : memref<5xf32>
  }
  %w = memref.alloc() : memref<3xf32>
  memref.store %one, %w[%c0] : memref<3xf32>
  memref.store %zero, %w[%c1] : memref<3xf32>
  memref.store %minus, %w[%c2] : memref<3xf32>
  %y = memref.alloc() : memref<3xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<3xf32>)
  linalg.conv_1d ins(%x, %w : memref<5xf32>, memref<3xf32>) outs(%y : memref<3xf32>)
  %yu = memref.cast %y : memref<3xf32> to memref<*xf32>
  call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
  %a = memref.alloc() : memref<2x3xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<2x3xf32>)
  %c = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x2xf32>)
  %col = memref.subview %c[0, %c1] [2, 1] [1, 1] : memref<2x2xf32> to memref<2xf32, strided<[2], offset: ?>>
  %b = memref.subview %x[0] [3] [1] : memref<5xf32> to memref<3xf32, strided<[1]>>
  linalg.matvec ins(%a, %b : memref<2x3xf32>, memref<3xf32, strided<[1]>>) outs(%col : memref<2xf32, strided<[2], offset: ?>>)
  %cu = memref.cast %c : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%cu) : (memref<*xf32>) -> ()
  memref.dealloc %x : memref<5xf32>
  memref.dealloc %w : memref<3xf32>
  memref.dealloc %y : memref<3xf32>
  memref.dealloc %a : memref<2x3xf32>
  memref.dealloc %c : memref<2x2xf32>
  return
}
func.func private @printMemrefF32(memref<*xf32>)

// BAD: subview_out_of_bounds.mlir:5:3: error: 'memref.subview' dimension 0: offset 3, size 2, stride 1 is outside the source's extent 4
