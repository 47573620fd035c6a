//===- SerialSingleTask.cpp - Small parallel work runs on the caller ------===//
//
// cuvil-serial-single-task: an OpenMP region over a run-time extent forks
// only when its loop has more than one iteration; every loop ends its region
// without a barrier. cuvil-serial-foralls: a
// thread-level loop the schedule found too small to split becomes a plain
// loop nest.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CPU/Passes.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_SERIALSINGLETASK
#define GEN_PASS_DEF_SERIALFORALLS
#include "cuvil/Target/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {
/// The loop nest a parallel region distributes (omp.parallel > omp.wsloop >
/// omp.loop_nest, as convert-scf-to-openmp builds it), if that is its shape.
omp::LoopNestOp distributedLoop(omp::ParallelOp parallel) {
  omp::LoopNestOp nest;
  parallel.walk([&](omp::LoopNestOp loop) {
    if (!nest && loop->getParentOfType<omp::ParallelOp>() == parallel)
      nest = loop;
  });
  return nest;
}

/// Whether `nest` runs more than one iteration: any dimension whose span
/// exceeds its step.
Value severalIterations(OpBuilder &b, Location loc, omp::LoopNestOp nest) {
  Value any;
  for (auto [lb, ub, step] :
       llvm::zip(nest.getLowerBound(), nest.getUpperBound(), nest.getStep())) {
    Value span = b.create<arith::SubIOp>(loc, ub, lb);
    Value more =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, span, step);
    any = any ? b.create<arith::OrIOp>(loc, any, more).getResult() : more;
  }
  return any;
}

struct SerialSingleTaskPass
    : public cuvil::impl::SerialSingleTaskBase<SerialSingleTaskPass> {
  void runOnOperation() override {
    // Each loop ends its region: the region's end joins its threads, and a
    // barrier after the loop would need them all running at once (Cuvil's
    // thread pool runs a region's late shares on the threads that are).
    getOperation().walk([](omp::WsloopOp loop) { loop.setNowait(true); });
    getOperation().walk([](omp::ParallelOp parallel) {
      omp::LoopNestOp nest = distributedLoop(parallel);
      if (parallel.getIfExpr() || !nest)
        return;
      // Constant bounds were decided at compile time: a single iteration
      // has no parallel region left.
      auto constant = [](Value v) { return getConstantIntValue(v); };
      if (llvm::all_of(nest.getLowerBound(), constant) &&
          llvm::all_of(nest.getUpperBound(), constant) &&
          llvm::all_of(nest.getStep(), constant))
        return;
      OpBuilder b(parallel);
      Value several = severalIterations(b, parallel.getLoc(), nest);
      parallel.getIfExprMutable().assign(several);
    });
  }
};

struct SerialForallsPass
    : public cuvil::impl::SerialForallsBase<SerialForallsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> serial;
    getOperation().walk([&](scf::ForallOp forall) {
      if (forall->hasAttr(
              mlir::cuvil::CuvilDialect::SerialAttrHelper::getNameStr()))
        serial.push_back(forall);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp forall : serial) {
      rewriter.setInsertionPoint(forall);
      if (failed(scf::forallToForLoop(rewriter, forall))) {
        forall.emitError("cannot run this small parallel loop serially");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
