// Plain `xdsl-opt` sees devplan's dialects through the `xdsl.universe` entry point.
// RUN: xdsl-opt %s | filecheck %s

// CHECK: "test.op"() {t = #target.target<"cuda", {arch = "sm_80"}>} : () -> ()
"test.op"() {t = #target.target<"cuda", {arch = "sm_80"}>} : () -> ()
