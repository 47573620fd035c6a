// IR that does not parse or verify is an error at its line in the text,
// naming what is wrong; nothing is graphed.
// RUN: split-file %s %t
// RUN: %not %cuvil_graph %t/parse.mlir 2>&1 | FileCheck %s --check-prefix=PARSE
// RUN: %not %cuvil_graph %t/verify.mlir 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: %not %cuvil_graph %t/empty.mlir 2>&1 | FileCheck %s --check-prefix=EMPTY

// PARSE: parse.mlir:line 3: use of value '%0' expects different type than prior uses: 'i64' vs 'i32'
// VERIFY: verify.mlir:line 4: the IR does not verify: 'func.return' op has 0 operands, but enclosing function (@f) returns 1; fix the IR so that cuvil-opt accepts it
// EMPTY: empty.mlir:line 1: no function with a body (func.func, llvm.func, gpu.func, emitc.func or another FunctionOpInterface op) in the IR

//--- parse.mlir
func.func @f() {
  %0 = arith.constant 1 : i32
  %1 = arith.addi %0, %0 : i64
  return
}

//--- verify.mlir
module {
  func.func @f() -> i32 {
    %0 = arith.constant 1 : i32
    return
  }
}

//--- empty.mlir
module {
  func.func private @declared(i32)
}
