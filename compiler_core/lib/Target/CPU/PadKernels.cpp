//===- PadKernels.cpp - Paddings and fills as vector kernels --------------===//
//
// A tensor.pad (a convolution's zero border) bufferizes into a linalg.map
// writing the padding value over the whole buffer and a copy of the source
// into its interior. The map reaches LLVM as a scalar loop nest, which its
// vectorizer turned into scattered stores (64 x 58 x 58 floats: most of a
// 56 x 56 convolution's serial time). As a linalg.generic of no inputs
// before cuvil-cpu-schedule, the fill is an elementwise kernel like any
// other, tiled and vectorized along its rows; the source is inserted into
// it (a copy into a strided view, see cuvil-expand-strided-copies).
//
// The fills the schedule does not fuse into a kernel (a GEMM's result
// before its K blocks, attention's running maximum, sum and output) are
// vectorized after it, a register at a time along their rows. Left to LLVM,
// they came as scalar loops that it unrolled in full (64 stores a row) and
// then spent most of its dead-store analysis on.
//
//===----------------------------------------------------------------------===//

#include "PadKernels.h"
#include "RowKernels.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

/// The elementwise kernel writing `value` over a fresh `type` tensor, with
/// `attrs` (the padding's kernel tags) on the kernel. One too small to be
/// split across threads writes a single row of all the elements, seen in
/// `type`'s shape: one loop, not one per dimension, whose
/// short static trip counts (a 9 x 9 x 256 NHWC padding) LLVM unrolled into
/// one block of 1,300 stores, tens of milliseconds of its instruction
/// scheduler. Larger ones keep their dimensions for the threads to split.
static Value filled(OpBuilder &b, Location loc, RankedTensorType type,
                    Value value, DictionaryAttr attrs) {
  bool oneRow =
      type.getRank() > 1 && type.getNumElements() < cuvil::cpu::kSerialElements;
  auto kernelType = oneRow ? RankedTensorType::get({type.getNumElements()},
                                                   type.getElementType())
                           : type;
  Value empty = b.create<tensor::EmptyOp>(loc, kernelType.getShape(),
                                          kernelType.getElementType());
  auto rank = static_cast<unsigned>(kernelType.getRank());
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Value fill =
      b.create<linalg::GenericOp>(loc, kernelType, ValueRange{},
                                  ValueRange{empty}, maps, iterators,
                                  [&](OpBuilder &nb, Location l, ValueRange) {
                                    nb.create<linalg::YieldOp>(l, value);
                                  })
          .getResult(0);
  fill.getDefiningOp()->setDiscardableAttrs(attrs);
  if (!oneRow)
    return fill;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.front().push_back(d);
  return b.create<tensor::ExpandShapeOp>(loc, type, fill, all);
}

Value mlir::cuvil::cpu::paddingValueOutside(OpBuilder &b, tensor::PadOp pad) {
  Value value = pad.getConstantPaddingValue();
  // The value yielded by the region (a constant there) or defined above.
  if (Operation *def = value ? value.getDefiningOp() : nullptr;
      def && pad->isProperAncestor(def))
    value = b.clone(*def)->getResult(0);
  return value;
}

bool mlir::cuvil::cpu::padsAsFilledCopies(ModuleOp module) {
  SmallVector<std::pair<tensor::PadOp, Value>> pads;
  module.walk([&](tensor::PadOp pad) {
    Value value = pad.getConstantPaddingValue();
    if (value && pad.getResultType().hasStaticShape() &&
        pad.getSourceType().hasStaticShape() &&
        !ShapedType::isDynamicShape(pad.getStaticLow()))
      pads.push_back({pad, value});
  });
  IRRewriter rewriter(module.getContext());
  for (auto [pad, value] : pads) {
    rewriter.setInsertionPoint(pad);
    Location loc = pad.getLoc();
    value = paddingValueOutside(rewriter, pad);
    Value into = filled(rewriter, loc, pad.getResultType(), value,
                        pad->getDiscardableAttrDictionary());
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t size : pad.getSourceType().getShape()) {
      sizes.push_back(rewriter.getIndexAttr(size));
      strides.push_back(rewriter.getIndexAttr(1));
    }
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        pad, pad.getSource(), into, pad.getMixedLowPad(), sizes, strides);
  }
  return !pads.empty();
}

int64_t mlir::cuvil::cpu::innerVectorTile(int64_t size, int64_t lanes) {
  if (size % lanes == 0)
    return lanes;
  return size <= 4 * lanes ? size : 0;
}

bool mlir::cuvil::cpu::isBitPackedInVectors(Type elementType) {
  return elementType.isIntOrFloat() &&
         elementType.getIntOrFloatBitWidth() % 8 != 0;
}

void mlir::cuvil::cpu::vectorizeFills(ModuleOp module, int64_t lanes) {
  SmallVector<std::pair<linalg::FillOp, ArrayRef<int64_t>>> fills;
  module.walk([&](linalg::FillOp fill) {
    auto type = dyn_cast<RankedTensorType>(fill.getResult(0).getType());
    if (type && type.hasStaticShape() && type.getRank() > 0 &&
        type.getElementType().isIntOrFloat() &&
        !isBitPackedInVectors(type.getElementType()) &&
        innerVectorTile(type.getShape().back(), lanes) != 0)
      fills.push_back({fill, type.getShape()});
  });
  IRRewriter rewriter(module.getContext());
  for (auto [fill, shape] : fills) {
    // A loop of one element per outer dimension (none for a unit one), a
    // register or a short row along the innermost.
    SmallVector<OpFoldResult> tiles;
    for (int64_t size : shape.drop_back())
      tiles.push_back(rewriter.getIndexAttr(size == 1 ? 0 : 1));
    tiles.push_back(
        rewriter.getIndexAttr(innerVectorTile(shape.back(), lanes)));
    rewriter.setInsertionPoint(fill);
    scf::SCFTilingOptions options;
    options.setTileSizes(tiles);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(fill.getOperation()), options);
    if (failed(tiled))
      continue;
    rewriter.replaceOp(fill, tiled->replacements);
    for (Operation *op : tiled->tiledOps)
      if (auto tile = dyn_cast<linalg::FillOp>(op))
        (void)linalg::vectorize(rewriter, tile);
  }
}
