// MLIR's runner utilities in host code print what MLIR's runner prints.
// RUN: devplan-run %s --entry main | filecheck %s

// CHECK:      Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 0 offset = 0 sizes = [] strides = [] data =
// CHECK-NEXT: [1.5]
// CHECK-NEXT: Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 3 offset = 0 sizes = [2, 1, 2] strides = [2, 2, 1] data =
// CHECK-NEXT: {{\[\[\[}}-7,    -7]],
// CHECK-NEXT: {{^}}  {{\[\[}}-7,    -7]]]
// CHECK-NEXT: Unranked Memref base@ = {{.*}} sizes = [3] strides = [1] data =
// CHECK-NEXT: [0.1,  1e+20,  -inf]
// CHECK-NEXT: Unranked Memref base@ = {{.*}} sizes = [1] strides = [1] data =
// CHECK-NEXT: [0.5]
// CHECK-NEXT: 42
// CHECK-NEXT: -3
// CHECK-NEXT: 1
// CHECK-NEXT: 0.333333
// CHECK-NEXT: ( 4, 4, 4 )
// CHECK-NEXT: ( 2.5, 0, 0 )
// The scalar printers of CRunnerUtils.cpp write no newline of their own.
// CHECK-NEXT: {{^}}( -nan, nan, -inf, 1e+20, -0 ), 0.333333, -1, 18446744073709551615{{$}}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %f = memref.alloc() : memref<f32>
  %x = arith.constant 1.5 : f32
  memref.store %x, %f[] : memref<f32>
  %fu = memref.cast %f : memref<f32> to memref<*xf32>
  call @printMemrefF32(%fu) : (memref<*xf32>) -> ()
  %i = memref.alloc() : memref<2x1x2xi64>
  %m7 = arith.constant -7 : i64
  memref.store %m7, %i[%c0, %c0, %c0] : memref<2x1x2xi64>
  memref.store %m7, %i[%c0, %c0, %c1] : memref<2x1x2xi64>
  memref.store %m7, %i[%c1, %c0, %c0] : memref<2x1x2xi64>
  memref.store %m7, %i[%c1, %c0, %c1] : memref<2x1x2xi64>
  %iu = memref.cast %i : memref<2x1x2xi64> to memref<*xi64>
  call @printMemrefI64(%iu) : (memref<*xi64>) -> ()
  %d = memref.alloc() : memref<3xf64>
  %a = arith.constant 0.1 : f64
  %b = arith.constant 1.0e20 : f64
  %n = arith.constant 0xFFF0000000000000 : f64
  memref.store %a, %d[%c0] : memref<3xf64>
  memref.store %b, %d[%c1] : memref<3xf64>
  memref.store %n, %d[%c2] : memref<3xf64>
  %du = memref.cast %d : memref<3xf64> to memref<*xf64>
  call @printMemrefF64(%du) : (memref<*xf64>) -> ()
  %h = memref.alloc() : memref<1xf16>
  %half = arith.constant 0.5 : f16
  memref.store %half, %h[%c0] : memref<1xf16>
  %hu = memref.cast %h : memref<1xf16> to memref<*xf16>
  call @printMemrefF16(%hu) : (memref<*xf16>) -> ()
  %k = arith.constant 42 : index
  vector.print %k : index
  %s = arith.constant -3 : i8
  vector.print %s : i8
  %t = arith.constant true
  vector.print %t : i1
  %third = arith.constant 0.33333333 : f32
  vector.print %third : f32
  %v = memref.alloc() : memref<3xi32>
  %four = arith.constant 4 : i32
  memref.store %four, %v[%c0] : memref<3xi32>
  memref.store %four, %v[%c1] : memref<3xi32>
  memref.store %four, %v[%c2] : memref<3xi32>
  %pad = arith.constant 0 : i32
  %vec = vector.transfer_read %v[%c0], %pad : memref<3xi32>, vector<3xi32>
  vector.print %vec : vector<3xi32>
  %w = memref.alloc() : memref<2xf32>
  %two5 = arith.constant 2.5 : f32
  memref.store %two5, %w[%c0] : memref<2xf32>
  %zero = arith.constant 0.0 : f32
  %fv = vector.transfer_read %w[%c0], %zero : memref<2xf32>, vector<3xf32>
  vector.print %fv : vector<3xf32>
  %minus_nan = arith.constant 0xFFC00000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %minus_inf = arith.constant 0xFFF0000000000000 : f64
  %minus_zero = arith.constant -0.0 : f32
  %third64 = arith.constant 0.333333333 : f64
  %minus_one = arith.constant -1 : i64
  call @printOpen() : () -> ()
  call @printF32(%minus_nan) : (f32) -> ()
  call @printComma() : () -> ()
  call @printF32(%nan) : (f32) -> ()
  call @printComma() : () -> ()
  call @printF64(%minus_inf) : (f64) -> ()
  call @printComma() : () -> ()
  call @printF64(%b) : (f64) -> ()
  call @printComma() : () -> ()
  call @printF32(%minus_zero) : (f32) -> ()
  call @printClose() : () -> ()
  call @printComma() : () -> ()
  call @printF64(%third64) : (f64) -> ()
  call @printComma() : () -> ()
  call @printI64(%minus_one) : (i64) -> ()
  call @printComma() : () -> ()
  call @printU64(%minus_one) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printF32(f32)
func.func private @printF64(f64)
func.func private @printI64(i64)
func.func private @printU64(i64)
func.func private @printOpen()
func.func private @printClose()
func.func private @printComma()
func.func private @printNewline()
func.func private @printMemrefF64(memref<*xf64>)
func.func private @printMemrefF16(memref<*xf16>)
func.func private @printMemrefI64(memref<*xi64>)
