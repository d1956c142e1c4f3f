// RUN: not devplan-opt %s --split-input-file 2>&1 | filecheck %s

// A duplicate symbol in the implicit (unlocated) top-level module is reported at
// its second definition.

func.func @f() {
  func.return
}
// CHECK: devplan_opt_duplicate_symbol.mlir:[[# @LINE + 1]]:1: error: 'func.func' redefines symbol @f (first defined at line 6)
func.func @f() {
  func.return
}

