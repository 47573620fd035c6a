//===- JsModule.cpp - The ES module that loads a compiled wasm module -----===//
//
// `<name>.mjs` next to `<name>.wasm`:
//   import { load } from './mlp.mjs';
//   const model = await load();            // or a path, URL, bytes, Response
//   const y = model.mlp(x, w1, b1);        // Float32Array in, Float32Array out
//   model.signature.mlp.inputs[0];         // {dtype: 'float32', shape: [16,
//   32]}
// Inputs are typed arrays of the compiled dtype and element count,
// row-major; a function with one output returns it, with several an array.
// The module has no allocator: inputs and outputs are placed in linear
// memory past its static data (`__heap_base`), which grows as needed.
//
//===----------------------------------------------------------------------===//

#include "WasmBackend.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::cuvil;
using ::cuvil::TensorSignature;

namespace {

/// `[{"dtype": "float32", "shape": [16, 32]}, ...]`.
std::string signatureList(const std::vector<TensorSignature> &values) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::ListSeparator comma(", ");
  for (const TensorSignature &value : values) {
    os << comma << "{ dtype: '" << value.dtype << "', shape: [";
    llvm::ListSeparator sizes(", ");
    for (int64_t size : value.shape)
      os << sizes << size;
    os << "] }";
  }
  os << "]";
  return text;
}

/// The module's code after its generated header: loading and binding.
constexpr llvm::StringLiteral kLoader = R"JS(
/** The typed array of each dtype the signatures name. */
export const arrayTypes = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array,
  int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
};

const count = (shape) => shape.reduce((n, size) => n * size, 1);
const describe = (v) => `${v.dtype}[${v.shape.join(', ')}]`;
const PAGE = 65536;

function isNode() {
  return typeof process !== 'undefined' && process.versions != null &&
    process.versions.node != null;
}

/** The module's bytes from a path (Node), a URL, bytes or a Response. */
async function bytesOf(source) {
  if (source === undefined) source = new URL(WASM_FILE, import.meta.url);
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  if (typeof Response !== 'undefined' && source instanceof Response) {
    return source.arrayBuffer();
  }
  const url = source instanceof URL ? source : null;
  if (isNode() && (url === null ? !/^[a-z][a-z0-9+.-]*:\/\//i.test(source)
                                : url.protocol === 'file:')) {
    const { readFile } = await import('node:fs/promises');
    return readFile(source);
  }
  const response = await fetch(source);
  if (!response.ok) {
    throw new Error(`${MODULE}: cannot fetch ${source}: HTTP ${response.status}`);
  }
  return response.arrayBuffer();
}

/** The compiled function `name` bound to an instance. */
function bind(name, fn, exports) {
  const memory = exports.memory;
  const entry = exports[fn.export];
  if (typeof entry !== 'function') {
    throw new Error(`${MODULE}: the wasm module exports no ${fn.export}; ` +
      'load the .wasm compiled with this .mjs');
  }
  // Inputs then outputs, each 64-byte aligned, past the static data.
  const values = [...fn.inputs, ...fn.outputs];
  let end = exports.__heap_base.value;
  const offsets = values.map((v) => {
    const at = Math.ceil(end / 64) * 64;
    end = at + count(v.shape) * arrayTypes[v.dtype].BYTES_PER_ELEMENT;
    return at;
  });
  return function (...args) {
    if (args.length !== fn.inputs.length) {
      throw new TypeError(`${name}: takes ${fn.inputs.length} inputs ` +
        `(${fn.inputs.map(describe).join(', ')}), got ${args.length}`);
    }
    if (memory.buffer.byteLength < end) {
      memory.grow(Math.ceil((end - memory.buffer.byteLength) / PAGE));
    }
    fn.inputs.forEach((v, i) => {
      const Type = arrayTypes[v.dtype];
      const arg = args[i];
      if (!(arg instanceof Type)) {
        const got = arg === null ? 'null' : (arg?.constructor?.name ?? typeof arg);
        throw new TypeError(`${name}: input ${i} must be a ${Type.name} ` +
          `(${describe(v)}), got ${got}`);
      }
      if (arg.length !== count(v.shape)) {
        throw new RangeError(`${name}: input ${i} must have ` +
          `${count(v.shape)} elements (${describe(v)}, row-major), got ${arg.length}`);
      }
      new Type(memory.buffer, offsets[i], arg.length).set(arg);
    });
    entry(...offsets);
    const results = fn.outputs.map((v, j) => {
      const Type = arrayTypes[v.dtype];
      return new Type(memory.buffer, offsets[fn.inputs.length + j],
        count(v.shape)).slice();
    });
    return results.length === 1 ? results[0] : results;
  };
}

/**
 * Loads the module: from `source` (a path in Node, a URL, bytes or a
 * Response; by default the .wasm next to this file). Resolves to an object
 * with one method per compiled function and `signature`, their inputs and
 * outputs.
 */
export async function load(source) {
  const bytes = await bytesOf(source);
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const model = { signature: {} };
  for (const [name, fn] of Object.entries(FUNCTIONS)) {
    model[name] = bind(name, fn, instance.exports);
    model.signature[name] = { inputs: fn.inputs, outputs: fn.outputs };
  }
  return model;
}
)JS";

} // namespace

std::string wasm::jsModule(const LoadRequest &request, StringRef wasmFile) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string module =
      (wasmFile.drop_back(wasmFile.ends_with(".wasm") ? 5 : 0) + ".mjs").str();
  os << "// " << module << ": generated by Cuvil (target wasm). Loads "
     << wasmFile << ", which imports nothing, in Node\n// (16+) or a browser:\n"
     << "//   import { load } from './" << module << "';\n"
     << "//   const model = await load();\n"
     << "//   const result = model." << request.symbol << "(...inputs);\n"
     << "// Inputs are typed arrays of the dtype and element count below "
        "(row-major); one\n// output comes back as a typed array, several as "
        "an array of them.\n\n"
     << "const MODULE = '" << module << "';\n"
     << "const WASM_FILE = '" << wasmFile << "';\n"
     << "const FUNCTIONS = {\n  '" << request.symbol << "': {\n"
     << "    export: '" << exportOf(request) << "',\n"
     << "    inputs: " << signatureList(request.inputs) << ",\n"
     << "    outputs: " << signatureList(request.outputs) << ",\n  },\n};\n"
     << kLoader;
  return text;
}
