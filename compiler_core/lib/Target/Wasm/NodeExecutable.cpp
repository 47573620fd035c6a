//===- NodeExecutable.cpp - Calling a wasm module through Node ------------===//
//
// The process has no wasm engine, so a call from it runs the module in
// Node: the executable keeps the module, its ES module and a small runner
// in a private folder; each call writes the inputs to a file, runs
// `node run.mjs IN OUT` (the same loader a user's program imports) and
// reads the outputs back. A failure (no Node, a trap) becomes the call's
// error, raised in Python.
//
//===----------------------------------------------------------------------===//

#include "WasmBackend.h"

#include "cuvil/Dialect/Cuvil/IR/DTypes.h"
#include "cuvil/Runtime/MemRefCall.h"
#include "cuvil/Target/TargetSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <atomic>
#include <cstring>

using namespace mlir;
using namespace mlir::cuvil;
using ::cuvil::TensorSignature;

namespace {

constexpr llvm::StringLiteral kRunner =
    R"JS(// Runs the module for one call from Cuvil: inputs from argv[2], outputs to argv[3].
import { readFileSync, writeFileSync } from 'node:fs';
import { arrayTypes, load } from './module.mjs';

const [input, output] = process.argv.slice(2);
const model = await load(new URL('./module.wasm', import.meta.url));
const name = Object.keys(model.signature)[0];
const data = readFileSync(input);
let at = 0;
const args = model.signature[name].inputs.map((v) => {
  const Type = arrayTypes[v.dtype];
  const bytes = v.shape.reduce((n, s) => n * s, 1) * Type.BYTES_PER_ELEMENT;
  const copy = data.buffer.slice(data.byteOffset + at, data.byteOffset + at + bytes);
  at += bytes;
  return new Type(copy);
});
let results = model[name](...args);
if (model.signature[name].outputs.length === 1) results = [results];
writeFileSync(output, Buffer.concat(
  results.map((r) => Buffer.from(r.buffer, r.byteOffset, r.byteLength))));
)JS";

/// Bytes of a C-contiguous buffer of `value` (the dtype table's sizes; 0 for
/// a dtype it has not, which loadInNode refuses).
size_t bytesOf(const TensorSignature &value) {
  const DType *dtype = lookupDType(value.dtype);
  size_t bytes = dtype ? dtype->byteSize : 0;
  for (int64_t size : value.shape)
    bytes *= static_cast<size_t>(size);
  return bytes;
}

class NodeExecutable : public ::cuvil::Executable {
public:
  NodeExecutable(std::string node, std::string folder,
                 std::vector<TensorSignature> inputs,
                 std::vector<TensorSignature> outputs)
      : node(std::move(node)), folder(std::move(folder)),
        inputs(std::move(inputs)), outputs(std::move(outputs)) {}

  ~NodeExecutable() override {
    for (const char *file : {"module.wasm", "module.mjs", "run.mjs"})
      llvm::sys::fs::remove(path(file));
    llvm::sys::fs::remove(folder);
  }

  void call(void *const *in, void *const *out, const ::cuvil::KernelHooks *,
            const ::cuvil::Shapes *) const override {
    std::string error;
    if (failed(run(in, out, error)))
      ::cuvil::reportCallFailure("the wasm module failed in Node: " + error);
  }

private:
  std::string path(llvm::StringRef file) const {
    llvm::SmallString<128> p(folder);
    llvm::sys::path::append(p, file);
    return p.str().str();
  }

  LogicalResult run(void *const *in, void *const *out,
                    std::string &error) const {
    // Calls may overlap (threads): each has its own files.
    std::string call = std::to_string(next.fetch_add(1));
    std::string inputFile = path("in-" + call),
                outputFile = path("out-" + call);
    auto cleanup = llvm::make_scope_exit([&] {
      llvm::sys::fs::remove(inputFile);
      llvm::sys::fs::remove(outputFile);
    });
    std::string data;
    for (size_t i = 0; i < inputs.size(); ++i)
      data.append(static_cast<const char *>(in[i]), bytesOf(inputs[i]));
    if (failed(writeFile(inputFile, data, error)))
      return failure();
    std::string runner = path("run.mjs");
    SmallVector<StringRef> args = {node, runner, inputFile, outputFile};
    if (failed(takeError(runTool(node, args, outputFile), error)))
      return failure();
    auto results = llvm::MemoryBuffer::getFile(outputFile);
    if (!results) {
      error = "no outputs in " + outputFile;
      return failure();
    }
    size_t expected = 0;
    for (const TensorSignature &value : outputs)
      expected += bytesOf(value);
    StringRef bytes = (*results)->getBuffer();
    if (bytes.size() != expected) {
      error = "it wrote " + std::to_string(bytes.size()) +
              " bytes of outputs, not the " + std::to_string(expected) +
              " of the signature";
      return failure();
    }
    size_t at = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::memcpy(out[i], bytes.data() + at, bytesOf(outputs[i]));
      at += bytesOf(outputs[i]);
    }
    return success();
  }

  std::string node, folder;
  std::vector<TensorSignature> inputs, outputs;
  mutable std::atomic<uint64_t> next{0};
};

} // namespace

std::unique_ptr<::cuvil::Executable>
wasm::loadInNode(StringRef bytes, const LoadRequest &request,
                 std::string &error) {
  std::string node;
  for (StringRef name : {"node", "nodejs"})
    if (auto found = llvm::sys::findProgramByName(name)) {
      node = *found;
      break;
    }
  if (node.empty()) {
    error = "the wasm target runs its code from Python in Node.js, and there "
            "is no `node` on PATH; fix: install Debian's nodejs, or export the "
            "module (CompiledModel.export) and run it in a browser";
    return nullptr;
  }
  for (const TensorSignature &value :
       llvm::concat<const TensorSignature>(request.inputs, request.outputs))
    if (!lookupDType(value.dtype)) {
      error = "the wasm target has no element type for " + value.dtype;
      return nullptr;
    }
  llvm::SmallString<128> folder;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("cuvil-wasm", folder)) {
    error = "cannot create a folder for the wasm module: " + ec.message();
    return nullptr;
  }
  auto executable = std::make_unique<NodeExecutable>(
      node, folder.str().str(), request.inputs, request.outputs);
  auto write = [&](StringRef file, StringRef content) {
    llvm::SmallString<128> p(folder);
    llvm::sys::path::append(p, file);
    return writeFile(p, content, error);
  };
  if (failed(write("module.wasm", bytes)) ||
      failed(write("module.mjs", jsModule(request, "module.wasm"))) ||
      failed(write("run.mjs", kRunner)))
    return nullptr;
  return executable;
}
