//===- MmaMatmul.cpp - GEMMs on tensor cores (mma.sync) -------------------===//
//
// The tensor-core kernel of cuvil-cuda-tile-matmul, for contractions of
// bf16 or f16 operands summed in float32 (what cuvil-reduce-precision makes
// of a model's matmuls; a left operand Cuvil's lowering widened to float32
// is narrowed back as it is loaded, exactly). A block of 4 warps computes a 64
// x 64 tile of the result, each warp a 32 x 32 quarter as 2 x 4 tiles of
// m16n8k16 mma.sync with float32 accumulators in registers. The operands'
// 32-deep slices are staged in shared memory, rows padded by 16 bytes
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
constexpr int64_t kWarpM = 32, kWarpN = 32;          // one warp's tile
constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16; // one mma.sync
constexpr int64_t kFragsM = kWarpM / kMmaM, kFragsN = kWarpN / kMmaN;
constexpr int64_t kBM = kWarpsM * kWarpM, kBN = kWarpsN * kWarpN, kBK = 32;
constexpr int64_t kThreads = kLanes * kWarpsM * kWarpsN;
constexpr int64_t kPad = 8; // elements: 16 bytes
constexpr int64_t kSumsPerMma = 4;

/// d = a * b + c on one warp's 16 x 8 tile: `a` four and `b` two pairs of
/// 16-bit values (vector<2xT>), `c` four floats; returns d's four floats.
SmallVector<Value> mmaSync(OpBuilder &b, Location l, Type element,
                           ArrayRef<Value> a, ArrayRef<Value> bv,
                           ArrayRef<Value> c) {
  Type f32 = b.getF32Type();
  // bf16 pairs travel as the 32-bit registers the intrinsic takes; f16
  // pairs as <2 x half>.
  auto reg = [&](Value pair) -> Value {
    if (element.isF16())
      return pair;
    Value word = b.create<vector::BitCastOp>(
        l, VectorType::get({1}, b.getI32Type()), pair);
    return b.create<vector::ExtractOp>(l, word, ArrayRef<int64_t>{0});
  };
  SmallVector<Value> operands;
  for (Value v : a)
    operands.push_back(reg(v));
  for (Value v : bv)
    operands.push_back(reg(v));
  llvm::append_range(operands, c);
  StringRef intrinsic = element.isBF16()
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

/// Element `i` of a vector<NxT> as vector<T> registers: the pairs of an
/// ldmatrix result.
Value pairOf(OpBuilder &b, Location l, Value fragment, int64_t i) {
  return b.create<vector::ExtractOp>(l, fragment, ArrayRef<int64_t>{i});
}

} // namespace

void GemmKernelBuilder::buildTensorCore(RewriterBase &rewriter) {
  Location l = loc();
  OpBuilder &b = rewriter;
  Type element = dims.narrow;
  // The left operand's slice m-major, the right one's k-major.
  auto [launch, size, m0, n0, batchIv, tid] =
      launchOverTiles(b, kBM, kBN, kLanes, kWarpsM * kWarpsN, element,
                      {{kBM, kBK + kPad}, {kBK, kBN + kPad}});
  auto [M, N, K] = size;
  Value lane = launch.getThreadIds().x, warp = launch.getThreadIds().y;
  // The warp's quarter of the block's tile.
  Value wm = b.create<arith::MulIOp>(
      l, b.create<arith::DivUIOp>(l, warp, index(b, kWarpsN)),
      index(b, kWarpM));
  Value wn = b.create<arith::MulIOp>(
      l, b.create<arith::RemUIOp>(l, warp, index(b, kWarpsN)),
      index(b, kWarpN));
  Value as = launch.getWorkgroupAttributions()[0];
  Value bs = launch.getWorkgroupAttributions()[1];
  Slice aSlice{&op->getOpOperand(0), dims.m, dims.k, M, K, kBM, kBK, kThreads};
  Slice bSlice{&op->getOpOperand(1), dims.k, dims.n, K, N, kBK, kBN, kThreads};
  // The 16-bit values a plain widening made the left operand from.
  if (dims.widening)
    aSlice.source = dims.widening.getDpsInputs()[0];

  // ldmatrix .x4: lanes 0-15 give the rows of the first 8 columns (two 8x8
  // matrices), lanes 16-31 those of the next 8.
  Value laneRow = b.create<arith::RemUIOp>(l, lane, index(b, 16));
  Value laneCol = b.create<arith::MulIOp>(
      l, b.create<arith::DivUIOp>(l, lane, index(b, 16)), index(b, 8));
  auto fragments = VectorType::get({4, 2}, element);

  // A left operand given widened is narrowed as it is loaded (exact).
  auto loadA = [&](OpBuilder &lb, Value k0) {
    SmallVector<Value> values = loadSlice(lb, aSlice, m0, k0, tid, batchIv);
    for (Value &v : values)
      if (v.getType() != element)
        v = lb.create<arith::TruncFOp>(l, element, v);
    return values;
  };
  Value zero =
      b.create<arith::ConstantFloatOp>(l, APFloat(0.0f), b.getF32Type());
  SmallVector<Value> init(kFragsM * kFragsN * kSumsPerMma, zero);
  size_t sums = init.size();
  llvm::append_range(init, loadA(b, index(b, 0)));
  size_t aValues = init.size() - sums;
  llvm::append_range(init, loadSlice(b, bSlice, index(b, 0), n0, tid, batchIv));
  auto kLoop = b.create<scf::ForOp>(
      l, index(b, 0), K, index(b, kBK), init,
      [&](OpBuilder &lb, Location ll, Value k0, ValueRange carried) {
        ValueRange acc = carried.take_front(sums);
        SmallVector<Value> values(carried.drop_front(sums));
        storeSlice(lb, aSlice, as, tid, ArrayRef(values).take_front(aValues));
        storeSlice(lb, bSlice, bs, tid, ArrayRef(values).drop_front(aValues));
        lb.create<gpu::BarrierOp>(ll);
        // The next slices are on their way while this one is multiplied
        // (past K they are all zeros, guarded off).
        Value next = lb.create<arith::AddIOp>(ll, k0, index(lb, kBK));
        SmallVector<Value> nextA = loadA(lb, next);
        SmallVector<Value> nextB =
            loadSlice(lb, bSlice, next, n0, tid, batchIv);
        SmallVector<Value> out(acc.begin(), acc.end());
        for (int64_t kk = 0; kk < kBK; kk += kMmaK) {
          SmallVector<Value> a, bq;
          Value col = lb.create<arith::AddIOp>(ll, laneCol, index(lb, kk));
          for (int64_t mi = 0; mi < kFragsM; ++mi) {
            Value row = lb.create<arith::AddIOp>(
                ll, wm,
                lb.create<arith::AddIOp>(ll, laneRow, index(lb, mi * kMmaM)));
            a.push_back(lb.create<nvgpu::LdMatrixOp>(
                ll, fragments, as, ValueRange{row, col}, /*transpose=*/false,
                /*numTiles=*/4));
          }
          // One .x4.trans serves two n8 tiles: k 0-7 and 8-15 of each.
          Value kRow = lb.create<arith::AddIOp>(ll, laneRow, index(lb, kk));
          for (int64_t nj = 0; nj < kFragsN / 2; ++nj) {
            Value nCol = lb.create<arith::AddIOp>(
                ll, wn,
                lb.create<arith::AddIOp>(ll, laneCol,
                                         index(lb, nj * 2 * kMmaN)));
            bq.push_back(lb.create<nvgpu::LdMatrixOp>(
                ll, fragments, bs, ValueRange{kRow, nCol}, /*transpose=*/true,
                /*numTiles=*/4));
          }
          for (int64_t mi = 0; mi < kFragsM; ++mi)
            for (int64_t ni = 0; ni < kFragsN; ++ni) {
              SmallVector<Value> aRegs, bRegs;
              for (int64_t i = 0; i < 4; ++i)
                aRegs.push_back(pairOf(lb, ll, a[mi], i));
              for (int64_t i = 0; i < 2; ++i)
                bRegs.push_back(pairOf(lb, ll, bq[ni / 2], (ni % 2) * 2 + i));
              auto c = MutableArrayRef<Value>(out).slice(
                  (mi * kFragsN + ni) * kSumsPerMma, kSumsPerMma);
              SmallVector<Value> d =
                  mmaSync(lb, ll, element, aRegs, bRegs, SmallVector<Value>(c));
              llvm::copy(d, c.begin());
            }
        }
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
      b.create<arith::AddIOp>(l, m0, b.create<arith::AddIOp>(l, wm, g));
  Value colBase =
      b.create<arith::AddIOp>(l, n0, b.create<arith::AddIOp>(l, wn, t2));
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
