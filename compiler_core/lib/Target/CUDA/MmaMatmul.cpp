//===- MmaMatmul.cpp - GEMMs on tensor cores (mma.sync) -------------------===//
//
// The tensor-core kernel of cuvil-cuda-tile-matmul, for contractions of
// bf16 or f16 operands summed in float32 (what cuvil-reduce-precision makes
// of a model's matmuls; a left operand Cuvil's lowering widened to float32
// is narrowed back as it is loaded, exactly), and for float32 contractions
// of a function allowed TF32 (`cuvil.tf32_matmuls`): operands rounded to
// TF32 on their way to shared memory, m16n8k8 MMAs, fragments read with
// plain loads from rows padded against bank conflicts. A block of 4 warps
// computes a 64 x 64 tile of the result, each warp a 32 x 32 quarter as 2 x 4
// tiles of m16n8k16 mma.sync with float32 accumulators in registers. The
// operands' 32-deep slices are staged in shared memory, rows padded by 16 bytes
// (ldmatrix's row addresses stay 16-byte aligned and the 8 rows of one 8x8
// matrix fall in distinct banks); fragments are loaded with ldmatrix (.trans
// for the right operand, kept k-major). The next slice is loaded from global
// memory into registers while the tensor cores work on the current one. Edges
// are zero-filled on the way in and guarded on the way out, so any size works.
//
// MLIR 19's nvvm.mma.sync types bf16 fragments as f16 pairs, which LLVM's
// intrinsic does not accept; the intrinsic is called directly, with the
// 32-bit registers the PTX instruction takes.
//
//===----------------------------------------------------------------------===//

#include "GemmKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::cuvil::cuda;

namespace {

constexpr int64_t kLanes = 32, kWarpsM = 2, kWarpsN = 2;
constexpr int64_t kWarpM = 32, kWarpN = 32; // one warp's tile
constexpr int64_t kMmaM = 16, kMmaN = 8;    // one mma.sync
constexpr int64_t kFragsM = kWarpM / kMmaM, kFragsN = kWarpN / kMmaN;
constexpr int64_t kBM = kWarpsM * kWarpM, kBN = kWarpsN * kWarpN, kBK = 32;
constexpr int64_t kThreads = kLanes * kWarpsM * kWarpsN;
constexpr int64_t kSumsPerMma = 4;

/// What the MMAs read: 16-bit floats (m16n8k16, fragments by ldmatrix) or
/// float32 values rounded to TF32 (m16n8k8, fragments by plain loads).
struct Flavour {
  Type element; ///< as staged in shared memory
  bool tf32;
  int64_t mmaK;
  /// Padding of the slices' rows, in elements. 16-bit: 16 bytes, so that
  /// ldmatrix's row addresses stay aligned and the 8 rows of one 8x8 matrix
  /// fall in distinct banks. TF32: lane (g, t) reads row g, column t of the
  /// left slice (row stride 36: bank 4g + t) and row t, column g of the
  /// right one (stride 72: bank 8t + g), both conflict-free.
  int64_t padA, padB;
};

Flavour flavourOf(const GemmDims &dims, Builder &b) {
  if (dims.kind == GemmKind::TF32)
    return {b.getF32Type(), true, 8, 4, 8};
  return {dims.narrow, false, 16, 8, 8};
}

Value constantIndex(OpBuilder &b, Location l, int64_t value) {
  return b.create<arith::ConstantIndexOp>(l, value);
}

/// d = a * b + c on one warp's 16 x k tile: `a` four and `b` two 32-bit
/// registers (pairs of 16-bit values as vector<2xT>, or one TF32 value as
/// i32), `c` four floats; returns d's four floats.
SmallVector<Value> mmaSync(OpBuilder &b, Location l, const Flavour &flavour,
                           ArrayRef<Value> a, ArrayRef<Value> bv,
                           ArrayRef<Value> c) {
  Type f32 = b.getF32Type();
  // bf16 pairs travel as the 32-bit registers the intrinsic takes; f16
  // pairs as <2 x half>.
  auto reg = [&](Value value) -> Value {
    if (flavour.tf32 || flavour.element.isF16())
      return value;
    Value word = b.create<vector::BitCastOp>(
        l, VectorType::get({1}, b.getI32Type()), value);
    return b.create<vector::ExtractOp>(l, word, ArrayRef<int64_t>{0});
  };
  SmallVector<Value> operands;
  for (Value v : a)
    operands.push_back(reg(v));
  for (Value v : bv)
    operands.push_back(reg(v));
  llvm::append_range(operands, c);
  StringRef intrinsic = flavour.tf32 ? "llvm.nvvm.mma.m16n8k8.row.col.tf32"
                        : flavour.element.isBF16()
                            ? "llvm.nvvm.mma.m16n8k16.row.col.bf16"
                            : "llvm.nvvm.mma.m16n8k16.row.col.f32.f32";
  auto result =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value d = b.create<LLVM::CallIntrinsicOp>(l, result, intrinsic, operands)
                ->getResult(0);
  SmallVector<Value> sums;
  for (int64_t i = 0; i < kSumsPerMma; ++i)
    sums.push_back(b.create<LLVM::ExtractValueOp>(l, d, i));
  return sums;
}

/// `value` rounded to TF32 (to nearest, ties away), kept as the float32
/// bits it is.
Value roundToTf32(OpBuilder &b, Location l, Value value) {
  Value bits = b.create<LLVM::CallIntrinsicOp>(l, b.getI32Type(),
                                               "llvm.nvvm.f2tf32.rna", value)
                   ->getResult(0);
  return b.create<arith::BitcastOp>(l, b.getF32Type(), bits);
}

/// One warp's view of the slices in shared memory.
struct WarpSlices {
  Value as, bs; ///< left slice m-major, right slice k-major
  Value wm, wn; ///< the warp's quarter of the block's tile
  Value lane;
};

/// The products of one k step of `mmaK` (at `kk` in the slices) on 16-bit
/// operands, added to the warp's sums `out`.
void multiply16(OpBuilder &b, Location l, const Flavour &flavour,
                const WarpSlices &w, int64_t kk, MutableArrayRef<Value> out) {
  auto idx = [&](int64_t v) { return constantIndex(b, l, v); };
  auto add = [&](Value x, Value y) {
    return b.create<arith::AddIOp>(l, x, y).getResult();
  };
  // ldmatrix .x4: lanes 0-15 give the rows of the first 8 columns (two 8x8
  // matrices), lanes 16-31 those of the next 8.
  Value laneRow = b.create<arith::RemUIOp>(l, w.lane, idx(16));
  Value laneCol = b.create<arith::MulIOp>(
      l, b.create<arith::DivUIOp>(l, w.lane, idx(16)), idx(8));
  auto fragments = VectorType::get({4, 2}, flavour.element);
  SmallVector<Value> a, bq;
  Value col = add(laneCol, idx(kk));
  for (int64_t mi = 0; mi < kFragsM; ++mi)
    a.push_back(b.create<nvgpu::LdMatrixOp>(
        l, fragments, w.as,
        ValueRange{add(w.wm, add(laneRow, idx(mi * kMmaM))), col},
        /*transpose=*/false, /*numTiles=*/4));
  // One .x4.trans serves two n8 tiles: k 0-7 and 8-15 of each.
  Value kRow = add(laneRow, idx(kk));
  for (int64_t nj = 0; nj < kFragsN / 2; ++nj)
    bq.push_back(b.create<nvgpu::LdMatrixOp>(
        l, fragments, w.bs,
        ValueRange{kRow, add(w.wn, add(laneCol, idx(nj * 2 * kMmaN)))},
        /*transpose=*/true, /*numTiles=*/4));
  auto pair = [&](Value fragment, int64_t i) -> Value {
    return b.create<vector::ExtractOp>(l, fragment, ArrayRef<int64_t>{i});
  };
  for (int64_t mi = 0; mi < kFragsM; ++mi)
    for (int64_t ni = 0; ni < kFragsN; ++ni) {
      SmallVector<Value> aRegs, bRegs;
      for (int64_t i = 0; i < 4; ++i)
        aRegs.push_back(pair(a[mi], i));
      for (int64_t i = 0; i < 2; ++i)
        bRegs.push_back(pair(bq[ni / 2], (ni % 2) * 2 + i));
      auto c = out.slice((mi * kFragsN + ni) * kSumsPerMma, kSumsPerMma);
      SmallVector<Value> d =
          mmaSync(b, l, flavour, aRegs, bRegs, SmallVector<Value>(c));
      llvm::copy(d, c.begin());
    }
}

/// The same on TF32 operands (m16n8k8): lane (g, t) = (lane / 4, lane % 4)
/// holds rows g and g + 8, columns t and t + 4 of the left fragment, and
/// rows t and t + 4, column g of the right one.
void multiplyTf32(OpBuilder &b, Location l, const Flavour &flavour,
                  const WarpSlices &w, int64_t kk, MutableArrayRef<Value> out) {
  auto idx = [&](int64_t v) { return constantIndex(b, l, v); };
  auto add = [&](Value x, Value y) {
    return b.create<arith::AddIOp>(l, x, y).getResult();
  };
  auto word = [&](Value tile, Value row, Value col) -> Value {
    Value v = b.create<memref::LoadOp>(l, tile, ValueRange{row, col});
    return b.create<arith::BitcastOp>(l, b.getI32Type(), v);
  };
  Value g = b.create<arith::DivUIOp>(l, w.lane, idx(4));
  Value t = add(b.create<arith::RemUIOp>(l, w.lane, idx(4)), idx(kk));
  SmallVector<SmallVector<Value>> a(kFragsM), bq(kFragsN);
  for (int64_t mi = 0; mi < kFragsM; ++mi)
    for (int64_t i = 0; i < 4; ++i)
      a[mi].push_back(word(w.as,
                           add(w.wm, add(g, idx(mi * kMmaM + (i % 2) * 8))),
                           add(t, idx((i / 2) * 4))));
  for (int64_t ni = 0; ni < kFragsN; ++ni)
    for (int64_t i = 0; i < 2; ++i)
      bq[ni].push_back(
          word(w.bs, add(t, idx(i * 4)), add(w.wn, add(g, idx(ni * kMmaN)))));
  for (int64_t mi = 0; mi < kFragsM; ++mi)
    for (int64_t ni = 0; ni < kFragsN; ++ni) {
      auto c = out.slice((mi * kFragsN + ni) * kSumsPerMma, kSumsPerMma);
      SmallVector<Value> d =
          mmaSync(b, l, flavour, a[mi], bq[ni], SmallVector<Value>(c));
      llvm::copy(d, c.begin());
    }
}

} // namespace

void GemmKernelBuilder::buildTensorCore(RewriterBase &rewriter) {
  Location l = loc();
  OpBuilder &b = rewriter;
  Flavour flavour = flavourOf(dims, b);
  Type element = flavour.element;
  // The left operand's slice m-major, the right one's k-major.
  auto [launch, size, m0, n0, batchIv, tid] =
      launchOverTiles(b, kBM, kBN, kLanes, kWarpsM * kWarpsN, element,
                      {{kBM, kBK + flavour.padA}, {kBK, kBN + flavour.padB}});
  auto [M, N, K] = size;
  Value lane = launch.getThreadIds().x, warp = launch.getThreadIds().y;
  WarpSlices slices{launch.getWorkgroupAttributions()[0],
                    launch.getWorkgroupAttributions()[1],
                    b.create<arith::MulIOp>(
                        l, b.create<arith::DivUIOp>(l, warp, index(b, kWarpsN)),
                        index(b, kWarpM)),
                    b.create<arith::MulIOp>(
                        l, b.create<arith::RemUIOp>(l, warp, index(b, kWarpsN)),
                        index(b, kWarpN)),
                    lane};
  Slice aSlice{&op->getOpOperand(0), dims.m, dims.k, M, K, kBM, kBK, kThreads};
  Slice bSlice{&op->getOpOperand(1), dims.k, dims.n, K, N, kBK, kBN, kThreads};
  // The 16-bit values a plain widening made the left operand from.
  if (dims.widening)
    aSlice.source = dims.widening.getDpsInputs()[0];

  // Values on their way to shared memory: a left operand given widened is
  // narrowed (exact), float32 rounded to TF32 once here.
  auto load = [&](OpBuilder &lb, const Slice &slice, Value row0, Value col0) {
    SmallVector<Value> values = loadSlice(lb, slice, row0, col0, tid, batchIv);
    for (Value &v : values)
      if (flavour.tf32)
        v = roundToTf32(lb, l, v);
      else if (v.getType() != element)
        v = lb.create<arith::TruncFOp>(l, element, v);
    return values;
  };
  Value zero =
      b.create<arith::ConstantFloatOp>(l, APFloat(0.0f), b.getF32Type());
  SmallVector<Value> init(kFragsM * kFragsN * kSumsPerMma, zero);
  size_t sums = init.size();
  llvm::append_range(init, load(b, aSlice, m0, index(b, 0)));
  size_t aValues = init.size() - sums;
  llvm::append_range(init, load(b, bSlice, index(b, 0), n0));
  auto kLoop = b.create<scf::ForOp>(
      l, index(b, 0), K, index(b, kBK), init,
      [&](OpBuilder &lb, Location ll, Value k0, ValueRange carried) {
        ValueRange acc = carried.take_front(sums);
        SmallVector<Value> values(carried.drop_front(sums));
        storeSlice(lb, aSlice, slices.as, tid,
                   ArrayRef(values).take_front(aValues));
        storeSlice(lb, bSlice, slices.bs, tid,
                   ArrayRef(values).drop_front(aValues));
        lb.create<gpu::BarrierOp>(ll);
        // The next slices are on their way while this one is multiplied
        // (past K they are all zeros, guarded off).
        Value next = lb.create<arith::AddIOp>(ll, k0, index(lb, kBK));
        SmallVector<Value> nextA = load(lb, aSlice, m0, next);
        SmallVector<Value> nextB = load(lb, bSlice, next, n0);
        SmallVector<Value> out(acc.begin(), acc.end());
        for (int64_t kk = 0; kk < kBK; kk += flavour.mmaK)
          (flavour.tf32 ? multiplyTf32 : multiply16)(lb, ll, flavour, slices,
                                                     kk, out);
        // Every warp is done with the slices before they are refilled.
        lb.create<gpu::BarrierOp>(ll);
        llvm::append_range(out, nextA);
        llvm::append_range(out, nextB);
        lb.create<scf::YieldOp>(ll, out);
      });

  // C += the sums: lane holds rows g and g + 8, columns 2t and 2t + 1 of
  // each 16 x 8 tile (g = lane / 4, t = lane % 4).
  Value g = b.create<arith::DivUIOp>(l, lane, index(b, 4));
  Value t2 = b.create<arith::MulIOp>(
      l, b.create<arith::RemUIOp>(l, lane, index(b, 4)), index(b, 2));
  Value rowBase =
      b.create<arith::AddIOp>(l, m0, b.create<arith::AddIOp>(l, slices.wm, g));
  Value colBase =
      b.create<arith::AddIOp>(l, n0, b.create<arith::AddIOp>(l, slices.wn, t2));
  for (int64_t mi = 0; mi < kFragsM; ++mi)
    for (int64_t ni = 0; ni < kFragsN; ++ni)
      for (int64_t e = 0; e < kSumsPerMma; ++e) {
        Value m = b.create<arith::AddIOp>(l, rowBase,
                                          index(b, mi * kMmaM + (e / 2) * 8));
        Value n =
            b.create<arith::AddIOp>(l, colBase, index(b, ni * kMmaN + e % 2));
        Value sum = kLoop.getResult((mi * kFragsN + ni) * kSumsPerMma + e);
        storeIfInside(b, sum, m, n, M, N, batchIv);
      }
  b.create<gpu::TerminatorOp>(l);
  eraseAbsorbed(rewriter);
}
