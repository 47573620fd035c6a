//===- CuvilDialect.td - The cuvil dialect definition ------*- tablegen -*-===//
//
// The `cuvil` dialect: an explicit dataflow graph of tensor ops, the IR that
// every Cuvil front end produces and every backend consumes.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_TD
#define CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_TD

include "mlir/IR/OpBase.td"

def Cuvil_Dialect : Dialect {
  let name = "cuvil";
  let cppNamespace = "::mlir::cuvil";
  let summary = "Tensor dataflow graphs for AI inference";
  let description = [{
    The `cuvil` dialect models an inference graph as a dataflow graph of
    value-semantic tensor ops over builtin ranked tensors. It has no control
    flow: loops in the user's program arrive unrolled. Every op carries the
    location of the user source line that created it.
  }];
  let hasConstantMaterializer = 1;
}

class Cuvil_Op<string mnemonic, list<Trait> traits = []>
    : Op<Cuvil_Dialect, mnemonic, traits>;

#endif // CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_TD
