//===- GraphSupport.cpp - Locations, types and fingerprints of ops --------===//

#include "GraphSupport.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MD5.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;

namespace cuvil::graph {
namespace {

/// A stream that hashes what is printed to it instead of keeping it, so
/// big constants are never held as text twice.
class HashStream : public llvm::raw_ostream {
public:
  explicit HashStream(llvm::MD5 &md5) : md5(md5) {}
  ~HashStream() override { flush(); }

  std::string digest() {
    flush();
    llvm::MD5::MD5Result result;
    md5.final(result);
    return std::string(result.digest().str());
  }

private:
  void write_impl(const char *ptr, size_t size) override {
    md5.update(llvm::StringRef(ptr, size));
    position += size;
  }
  uint64_t current_pos() const override { return position; }

  llvm::MD5 &md5;
  uint64_t position = 0;
};

void printNestedOpNames(Region &region, llvm::raw_ostream &os) {
  os << '{';
  region.walk<WalkOrder::PreOrder>(
      [&](Operation *inner) { os << inner->getName().getStringRef() << ';'; });
  os << '}';
}

/// A location's line or column as the graph's int, 0 (unknown) when it is
/// past INT_MAX: a wrapped negative line made the whole graph unreadable for
/// the Workbench, whose reader accepts lines in [0, INT_MAX] only.
int checkedInt(unsigned value) {
  return value <= unsigned(std::numeric_limits<int>::max()) ? int(value) : 0;
}

/// `loc`'s name after the names of the NameLocs nested in it, its scopes.
std::string qualifiedNodeName(NameLoc loc) {
  std::string name = loc.getName().str();
  for (auto scope = dyn_cast<NameLoc>(loc.getChildLoc()); scope;
       scope = dyn_cast<NameLoc>(scope.getChildLoc()))
    name = scope.getName().str() + "/" + name;
  return name;
}

} // namespace

void describeLocation(Location loc, SourceLoc &file, std::string &name) {
  loc->walk([&](Location inner) {
    if (auto fileLoc = dyn_cast<FileLineColLoc>(inner)) {
      llvm::StringRef path = fileLoc.getFilename().getValue();
      if (file.file.empty() && !path.empty() && path != kInputName) {
        file.file = fileLoc.getFilename().str();
        file.line = checkedInt(fileLoc.getLine());
        file.column = checkedInt(fileLoc.getColumn());
      }
    } else if (auto nameLoc = dyn_cast<NameLoc>(inner)) {
      if (name.empty())
        name = qualifiedNodeName(nameLoc);
    }
    return WalkResult::advance();
  });
}

int inputLine(Location loc) {
  int line = 0;
  loc->walk([&](Location inner) {
    auto fileLoc = dyn_cast<FileLineColLoc>(inner);
    if (fileLoc && fileLoc.getFilename().getValue() == kInputName) {
      line = checkedInt(fileLoc.getLine());
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return line;
}

std::string typeSummary(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(types, os);
  os.flush();
  if (text.size() > 48)
    text = text.substr(0, 45) + "...";
  return text;
}

std::string opFingerprint(Operation *op) {
  llvm::MD5 md5;
  HashStream os(md5);
  os << op->getName().getStringRef() << ' ';
  op->getAttrDictionary().print(os);
  os << " : (";
  llvm::interleaveComma(op->getOperandTypes(), os);
  os << ") -> (";
  llvm::interleaveComma(op->getResultTypes(), os);
  os << ") ";
  // A location the parser made from the op's place in the text would mark
  // every op below an inserted line as changed.
  if (inputLine(op->getLoc()) == 0)
    op->getLoc().print(os);
  os << " successors " << op->getNumSuccessors();
  for (Region &region : op->getRegions())
    printNestedOpNames(region, os);
  return os.digest();
}

std::string blockFingerprint(Block &block, bool withOps) {
  llvm::MD5 md5;
  HashStream os(md5);
  os << "^block(";
  llvm::interleaveComma(block.getArgumentTypes(), os);
  os << ")";
  if (withOps)
    for (Operation &op : block) {
      os << op.getName().getStringRef() << ';';
      for (Region &region : op.getRegions())
        printNestedOpNames(region, os);
    }
  return os.digest();
}

std::string hashText(const std::string &text) {
  llvm::MD5 md5;
  md5.update(text);
  llvm::MD5::MD5Result result;
  md5.final(result);
  return std::string(result.digest().str());
}

} // namespace cuvil::graph
