//===- QuantizeWeights.cpp - The cuvil-quantize-weights pass --------------===//
//
// Weight-only int4 quantization of constant matmul weights: symmetric, one
// scale per group of rows and column, two values per byte (see
// cuvil.quantized_matmul for the layout).
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

namespace mlir::cuvil {
#define GEN_PASS_DEF_QUANTIZEWEIGHTS
#include "cuvil/Dialect/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// Symmetric codes of `w` (row-major K x N) with one scale per `group` rows
/// and column: scale = max|w| / `maxCode`, code = round(w / scale) in
/// [-maxCode, maxCode]. Int8 is one group of all K rows.
struct Quantized {
  std::vector<int8_t> codes; // K x N
  std::vector<float> scales; // K/group x N
};

Quantized quantizeGroups(const std::vector<float> &w, int64_t k, int64_t n,
                         int64_t group, float maxCode) {
  Quantized out;
  out.codes.assign(k * n, 0);
  out.scales.assign((k / group) * n, 0.0f);
  for (int64_t g = 0; g < k / group; ++g) {
    for (int64_t col = 0; col < n; ++col) {
      float amax = 0.0f;
      for (int64_t row = g * group; row < (g + 1) * group; ++row)
        amax = std::max(amax, std::fabs(w[row * n + col]));
      float scale = amax / maxCode;
      out.scales[g * n + col] = scale;
      if (scale == 0.0f || !std::isfinite(scale))
        continue;
      for (int64_t row = g * group; row < (g + 1) * group; ++row) {
        float q = std::nearbyint(w[row * n + col] / scale);
        out.codes[row * n + col] = (int8_t)std::clamp(q, -maxCode, maxCode);
      }
    }
  }
  return out;
}

/// Int4 codes (K x N) packed two per byte (K x N/2): column j in the low
/// nibble, column j + N/2 in the high one.
std::vector<int8_t> packInt4(const std::vector<int8_t> &codes, int64_t k,
                             int64_t n) {
  int64_t half = n / 2;
  std::vector<int8_t> packed(k * half, 0);
  for (int64_t row = 0; row < k; ++row)
    for (int64_t j = 0; j < half; ++j) {
      unsigned low = (unsigned)codes[row * n + j] & 0xFu;
      unsigned high = (unsigned)codes[row * n + j + half] & 0xFu;
      packed[row * half + j] = (int8_t)(uint8_t)(low | (high << 4));
    }
  return packed;
}

/// A rank-0 float32 constant.
Value scalar(OpBuilder &b, Location loc, float value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, value));
}

struct QuantizeWeightsPass
    : public cuvil::impl::QuantizeWeightsBase<QuantizeWeightsPass> {
  using QuantizeWeightsBase::QuantizeWeightsBase;

  /// Why `matmul` cannot be quantized, or empty; `weight` is its constant.
  std::string refusal(MatmulOp matmul, DenseElementsAttr &weight) {
    auto type = matmul.getType();
    if (!type.getElementType().isF32() ||
        !matmul.getLhs().getType().getElementType().isF32())
      return "it is not a float32 matmul";
    auto constant = matmul.getRhs().getDefiningOp<ConstantOp>();
    weight = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                      : DenseElementsAttr();
    if (!weight || weight.getType().getRank() != 2)
      return "its weight is not a 2-D constant (a run-time input stays "
             "float32)";
    if (bits == 8)
      return "";
    int64_t k = weight.getType().getDimSize(0),
            n = weight.getType().getDimSize(1);
    if (k % groupSize != 0)
      return "K=" + std::to_string(k) +
             " is not a multiple of the group size " +
             std::to_string(groupSize);
    if (n % columnMultiple != 0)
      return "N=" + std::to_string(n) + " is not a multiple of " +
             std::to_string(columnMultiple);
    return "";
  }

  static std::vector<float> floats(DenseElementsAttr weight) {
    std::vector<float> values;
    values.reserve(weight.getNumElements());
    for (const APFloat &v : weight.getValues<APFloat>())
      values.push_back(v.convertToFloat());
    return values;
  }

  /// The int4 form of `matmul` (see cuvil.quantized_matmul).
  Value int4Matmul(OpBuilder &b, MatmulOp matmul, DenseElementsAttr weight) {
    int64_t k = weight.getType().getDimSize(0),
            n = weight.getType().getDimSize(1);
    Quantized q = quantizeGroups(floats(weight), k, n, groupSize, 7.0f);
    std::vector<int8_t> packedCodes = packInt4(q.codes, k, n);
    Location loc = matmul.getRhs().getLoc();
    auto packedType = RankedTensorType::get({k, n / 2}, b.getIntegerType(8));
    auto scalesType = RankedTensorType::get({k / groupSize, n}, b.getF32Type());
    Value packed = b.create<ConstantOp>(
        loc, DenseElementsAttr::get(packedType, llvm::ArrayRef(packedCodes)));
    Value scales = b.create<ConstantOp>(
        loc, DenseElementsAttr::get(scalesType, llvm::ArrayRef(q.scales)));
    return b.create<QuantizedMatmulOp>(matmul.getLoc(), matmul.getType(),
                                       matmul.getLhs(), packed, scales,
                                       b.getI64IntegerAttr(groupSize));
  }

  /// The int8 form of `matmul` with activation scale `sx`.
  Value int8Matmul(OpBuilder &b, MatmulOp matmul, DenseElementsAttr weight,
                   float sx) {
    int64_t k = weight.getType().getDimSize(0),
            n = weight.getType().getDimSize(1);
    Quantized q = quantizeGroups(floats(weight), k, n, k, 127.0f);
    Location loc = matmul.getLoc();
    Value x = matmul.getLhs();
    auto xType = cast<RankedTensorType>(x.getType());
    auto i8 = b.getIntegerType(8), i32 = b.getIntegerType(32);
    // int8(clamp(round(x / sx), -127, 127))
    Value scaled = b.create<MulOp>(loc, x, scalar(b, loc, 1.0f / sx));
    Value rounded = b.create<RoundOp>(loc, scaled);
    Value clamped = b.create<MinOp>(
        loc, b.create<MaxOp>(loc, rounded, scalar(b, loc, -127.0f)),
        scalar(b, loc, 127.0f));
    Value xq = b.create<CastOp>(
        loc, RankedTensorType::get(xType.getShape(), i8), clamped);
    Value wq = b.create<ConstantOp>(
        matmul.getRhs().getLoc(),
        DenseElementsAttr::get(RankedTensorType::get({k, n}, i8),
                               llvm::ArrayRef(q.codes)));
    auto resultType = matmul.getType();
    Value product = b.create<MatmulOp>(
        loc, RankedTensorType::get(resultType.getShape(), i32), xq, wq);
    Value wide = b.create<CastOp>(loc, resultType, product);
    std::vector<float> columnScales(n);
    for (int64_t col = 0; col < n; ++col)
      columnScales[col] = sx * q.scales[col];
    Value scale = b.create<ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({n}, b.getF32Type()),
                                    llvm::ArrayRef(columnScales)));
    return b.create<MulOp>(loc, wide, scale);
  }

  /// bits=8, probe: each quantizable matmul's activation as a new result.
  void exposeActivations(ArrayRef<MatmulOp> matmuls) {
    func::FuncOp func = getOperation();
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    SmallVector<Value> results(ret.getOperands());
    for (MatmulOp matmul : matmuls)
      results.push_back(matmul.getLhs());
    OpBuilder b(ret);
    b.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    SmallVector<Type> types(func.getResultTypes());
    for (MatmulOp matmul : matmuls)
      types.push_back(matmul.getLhs().getType());
    func.setType(
        FunctionType::get(func.getContext(), func.getArgumentTypes(), types));
    func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  }

  void runOnOperation() override {
    if (bits != 4 && bits != 8) {
      getOperation().emitError("cuvil-quantize-weights: bits must be 4 or 8");
      return signalPassFailure();
    }
    if (groupSize <= 0 || columnMultiple <= 0 || columnMultiple % 2 != 0) {
      getOperation().emitError("cuvil-quantize-weights: group-size must be "
                               "positive and column-multiple positive and "
                               "even");
      return signalPassFailure();
    }
    SmallVector<std::pair<MatmulOp, DenseElementsAttr>> chosen;
    getOperation().walk([&](MatmulOp matmul) {
      DenseElementsAttr weight;
      std::string why = refusal(matmul, weight);
      if (why.empty())
        chosen.push_back({matmul, weight});
      else if (!probe)
        matmul.emitRemark("kept in float32: ") << why;
    });
    if (bits == 8 && probe) {
      exposeActivations(llvm::to_vector(
          llvm::map_range(chosen, [](auto &pair) { return pair.first; })));
      return;
    }
    if (bits == 8 && activationScales.size() != chosen.size()) {
      getOperation().emitError("cuvil-quantize-weights: ")
          << chosen.size() << " matmuls to quantize but "
          << activationScales.size()
          << " activation scales; calibrate with probe=1 first";
      return signalPassFailure();
    }
    for (auto [index, pair] : llvm::enumerate(chosen)) {
      auto [matmul, weight] = pair;
      OpBuilder b(matmul);
      Value result;
      if (bits == 4) {
        result = int4Matmul(b, matmul, weight);
      } else {
        double sx = activationScales[index];
        if (!(sx > 0) || !std::isfinite(sx)) {
          matmul.emitError("activation scale ")
              << sx << " must be positive and finite";
          return signalPassFailure();
        }
        result = int8Matmul(b, matmul, weight, (float)sx);
      }
      Operation *old = matmul.getRhs().getDefiningOp();
      matmul.replaceAllUsesWith(result);
      matmul.erase();
      if (old->use_empty())
        old->erase();
    }
    if (chosen.empty())
      markAllAnalysesPreserved();
  }
};
} // namespace
