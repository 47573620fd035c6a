//===- CheckResultSizes.cpp - The cuvil-check-result-sizes pass -----------===//
//
// A function with dynamic results writes each into an out-param the caller
// sized from the symbols' size expressions. Should an expression not hold
// for the inputs, the copy would write past the buffer; this pass makes the
// copy check first and report instead.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CHECKRESULTSIZES
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kMismatch = "cuvil_result_size_mismatch";

/// The argument of a function's entry block that `value` is, if any.
BlockArgument functionArgument(Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || !arg.getOwner()->isEntryBlock() ||
      !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return {};
  return arg;
}

/// `func.func private @cuvil_result_size_mismatch(i64, i64, i64, i64)`.
func::FuncOp declareMismatch(ModuleOp module) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(kMismatch))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type i64 = b.getI64Type();
  auto fn = b.create<func::FuncOp>(module.getLoc(), kMismatch,
                                   b.getFunctionType({i64, i64, i64, i64}, {}));
  fn.setPrivate();
  return fn;
}

/// Before `copy` into out-param `arg`: one check per dynamic dim.
void checkSizes(memref::CopyOp copy, BlockArgument arg, func::FuncOp handler) {
  OpBuilder b(copy);
  Location loc = copy.getLoc();
  auto type = cast<MemRefType>(copy.getTarget().getType());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    Value dim = b.create<arith::ConstantIndexOp>(loc, d);
    Value want = b.create<memref::DimOp>(loc, copy.getTarget(), dim);
    Value have = b.create<memref::DimOp>(loc, copy.getSource(), dim);
    Value differs =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, want, have);
    auto check = b.create<scf::IfOp>(loc, differs, /*withElseRegion=*/false);
    OpBuilder then = check.getThenBodyBuilder();
    auto constant = [&](int64_t v) {
      return then.create<arith::ConstantIntOp>(loc, v, 64).getResult();
    };
    Value args[] = {constant(arg.getArgNumber()), constant(d),
                    then.create<arith::IndexCastOp>(loc, b.getI64Type(), want),
                    then.create<arith::IndexCastOp>(loc, b.getI64Type(), have)};
    then.create<func::CallOp>(loc, handler, args);
  }
}

struct CheckResultSizesPass
    : public cuvil::impl::CheckResultSizesBase<CheckResultSizesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<memref::CopyOp, BlockArgument>> copies;
    module.walk([&](memref::CopyOp copy) {
      auto type = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (BlockArgument arg = functionArgument(copy.getTarget()))
        if (type && !type.hasStaticShape())
          copies.push_back({copy, arg});
    });
    if (copies.empty())
      return markAllAnalysesPreserved();
    func::FuncOp handler = declareMismatch(module);
    for (auto [copy, arg] : copies)
      checkSizes(copy, arg, handler);
  }
};
} // namespace
