// A bad pipeline is one message naming the pass or option and what is valid; exit 1.
// RUN: not devplan-opt %s -p clasify-regions 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not devplan-opt %s -p 'classify-regions{explian=true}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not devplan-opt %s -p 'classify-regions{explain=maybe}' 2>&1 | filecheck %s --check-prefix=TYPE
// RUN: not devplan-opt %s -p 'classify-regions{explain=true' 2>&1 | filecheck %s --check-prefix=SYNTAX

// PASS: error: unknown pass 'clasify-regions' (did you mean 'classify-regions'?); `devplan-opt --list-passes` lists every pass
// PASS-NOT: Traceback
// OPTION: error: pass 'classify-regions' has no option 'explian' (did you mean 'explain'?); its options: explain
// TYPE: error: pass 'classify-regions': option 'explain' expects bool, got 'maybe'
// SYNTAX: error: Error parsing pass pipeline specification:
// SYNTAX: Malformed pass arguments, expected either a space or `}` here

func.func @f() {
  func.return
}
