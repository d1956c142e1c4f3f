// User errors are one located message and exit status 1, never a traceback.
// RUN: not devplan-opt %s 2>&1 | filecheck %s --check-prefix=PARSE
// RUN: not devplan-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not devplan-opt %s.missing 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not devplan-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=PARSE

func.func @f() {
  // PARSE: devplan_opt_errors.mlir:[[# @LINE + 3]]:8: error: Operation arith.bogus is not registered
  // PARSE-NEXT: {{^}}  %x = arith.bogus : i32
  // PARSE-NOT: Traceback
  %x = arith.bogus : i32
  func.return
}

// PASS: {{^}}error: unknown pass 'no-such-pass'; `devplan-opt --list-passes` lists every pass
// PASS-NOT: Traceback
// MISSING: error: cannot read '{{.*}}devplan_opt_errors.mlir.missing': No such file or directory
