// Semi-affine maps (a symbol as divisor or factor), which MLIR accepts and xDSL 0.74's
// parser refuses, are read as written and evaluated where they are applied.
// RUN: devplan-opt %s | filecheck %s --check-prefix=IR
// RUN: devplan-run %s --args 3 7 2 | filecheck %s

// IR: affine_map<(d0, d1)[s0] -> (((d1 + (d0 * -1)) ceildiv s0))>
// IR: affine_map<(d0)[s0] -> ((d0 mod s0))>
// IR: affine_map<(d0)[s0] -> ((d0 * s0))>

// (7 - 3) ceildiv 2 = 2; 7 mod 2 = 1; 3 * 2 = 6; -7 floordiv 2 = -4.
// CHECK:      result 0: int64 = 2
// CHECK-NEXT: result 1: int64 = 1
// CHECK-NEXT: result 2: int64 = 6
// CHECK-NEXT: result 3: int64 = -4
#up = affine_map<(d0, d1)[s0] -> ((d1 - d0) ceildiv s0)>
func.func @main(%a: index, %b: index, %s: index) -> (index, index, index, index) {
  %r0 = affine.apply #up(%a, %b)[%s]
  %r1 = affine.apply affine_map<(d0)[s0] -> (d0 mod s0)>(%b)[%s]
  %r2 = affine.apply affine_map<(d0)[s0] -> (d0 * s0)>(%a)[%s]
  %r3 = affine.apply affine_map<(d0)[s0] -> ((0 - d0) floordiv s0)>(%b)[%s]
  func.return %r0, %r1, %r2, %r3 : index, index, index, index
}
