//===- CTarget.cpp - Dependency-free C as a target backend ----------------===//
//
// The c target's phases (plain loops, static buffers, EmitC), its C and
// header files, and running them in process: the C file is compiled with
// the system's C compiler into a shared library, opened privately like the
// CPU's code and called through the packed entry point the file defines.
//
// The C ABI of a function `name` with inputs in0.. and outputs out0..:
//   int name(const float *in0, ..., float *out0, ...);
//   int name_packed(void *const *inputs, void *const *outputs);
// Every buffer is C-contiguous (row-major) with the compiled shape; both
// return 0. Intermediates live in static storage: not reentrant.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/C/CTarget.h"

#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Runtime/SharedLibrary.h"
#include "cuvil/Target/C/Passes.h"
#include "cuvil/Target/TargetSupport.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/Cpp/CppEmitter.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::cuvil;
using ::cuvil::ArtifactKind;
using ::cuvil::IRStage;
using ::cuvil::TensorSignature;

namespace {

/// The C element type of a dtype-table name, or "" when C has none.
StringRef cType(StringRef dtype) {
  return llvm::StringSwitch<StringRef>(dtype)
      .Case("float32", "float")
      .Case("float64", "double")
      .Case("int8", "int8_t")
      .Case("int32", "int32_t")
      .Case("int64", "int64_t")
      .Case("bool", "bool")
      .Default("");
}

/// "[64][256]"; "[1]" for a scalar (EmitC has no rank-0 arrays).
std::string dims(const TensorSignature &signature) {
  std::string text;
  for (int64_t size : signature.shape)
    text += "[" + std::to_string(size) + "]";
  return text.empty() ? "[1]" : text;
}

std::string upper(StringRef name) { return llvm::StringRef(name).upper(); }

/// Names of the ABI's parameters: in0.., out0...
std::string parameter(bool input, size_t index) {
  return (input ? "in" : "out") + std::to_string(index);
}

/// Identifiers the C file should not define: C99's keywords, what the
/// headers it includes declare (<math.h>, <stdlib.h>, <stddef.h>,
/// <stdint.h>, <stdbool.h>) and common C library functions (a function
/// called `index` would be preempted by the C library's at run time).
bool reservedInC(StringRef name) {
  static const llvm::StringSet<> reserved = [] {
    llvm::StringSet<> names;
    for (StringRef word :
         {"auto", "break", "case", "char", "const", "continue", "default", "do",
          "double", "else", "enum", "extern", "float", "for", "goto", "if",
          "inline", "int", "long", "register", "restrict", "return", "short",
          "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
          "unsigned", "void", "volatile", "while", "bool", "true", "false",
          "abs", "labs", "llabs", "div", "ldiv", "lldiv", "malloc", "calloc",
          "realloc", "free", "exit", "abort", "atexit", "atoi", "atol", "atoll",
          "atof", "strtod", "strtof", "strtol", "rand", "srand", "qsort",
          "bsearch", "getenv", "system", "main", "size_t", "ptrdiff_t",
          "wchar_t", "offsetof", "NULL", "errno",
          // and common C library functions a program linking the file has
          "memcpy", "memmove", "memset", "memcmp", "strlen", "strcpy",
          "strncpy", "strcmp", "strncmp", "strcat", "strchr", "strrchr",
          "strstr", "index", "rindex", "bzero", "printf", "fprintf", "sprintf",
          "snprintf", "puts", "putchar", "fopen", "fclose", "read", "write",
          "open", "close", "time", "clock", "signal", "raise"})
      names.insert(word);
    // <math.h>: each function in double, float (f) and long double (l).
    for (StringRef base :
         {"acos",   "asin",      "atan",       "atan2",     "cos",
          "sin",    "tan",       "acosh",      "asinh",     "atanh",
          "cosh",   "sinh",      "tanh",       "exp",       "exp2",
          "expm1",  "frexp",     "ilogb",      "ldexp",     "log",
          "log10",  "log1p",     "log2",       "logb",      "modf",
          "scalbn", "scalbln",   "cbrt",       "fabs",      "hypot",
          "pow",    "sqrt",      "erf",        "erfc",      "lgamma",
          "tgamma", "ceil",      "floor",      "nearbyint", "rint",
          "lrint",  "llrint",    "round",      "lround",    "llround",
          "trunc",  "fmod",      "remainder",  "remquo",    "copysign",
          "nan",    "nextafter", "nexttoward", "fdim",      "fmax",
          "fmin",   "fma"}) {
      names.insert(base);
      names.insert((base + "f").str());
      names.insert((base + "l").str());
    }
    return names;
  }();
  return reserved.contains(name) || name.starts_with("__") ||
         (name.size() > 1 && name[0] == '_' && isupper(name[1]));
}

/// The function's name in the C ABI: its own, unless C reserves it (a
/// function called `exp` becomes `cuvil_exp`).
std::string entryOf(const LoadRequest &request) {
  StringRef name = request.symbol;
  // Nor may it be one of its own parameters' names (in0.., out0..).
  StringRef digits = name.starts_with("in")    ? name.drop_front(2)
                     : name.starts_with("out") ? name.drop_front(3)
                                               : "";
  bool parameterName = !digits.empty() && llvm::all_of(digits, llvm::isDigit);
  return reservedInC(name) || parameterName ? "cuvil_" + name.str()
                                            : name.str();
}

/// The kernel's name in the C file (static there).
std::string kernelOf(const LoadRequest &request) {
  return "cuvil_" + request.symbol + "_kernel";
}

/// `int name(const float *in0, ..., float *out0)`.
std::string prototype(const LoadRequest &request) {
  std::vector<std::string> parameters;
  for (size_t i = 0; i < request.inputs.size(); ++i)
    parameters.push_back("const " + cType(request.inputs[i].dtype).str() +
                         " *" + parameter(true, i));
  for (size_t i = 0; i < request.outputs.size(); ++i)
    parameters.push_back(cType(request.outputs[i].dtype).str() + " *" +
                         parameter(false, i));
  return "int " + entryOf(request) + "(" + llvm::join(parameters, ", ") + ")";
}

/// The header: includes, shapes as #defines and comments, the prototypes.
std::string header(const LoadRequest &request) {
  std::string guard = "CUVIL_" + upper(entryOf(request)) + "_H";
  std::string macro = upper(entryOf(request));
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "/* " << entryOf(request)
     << ".h: generated by Cuvil (target c). C99; needs only libc and libm.\n"
     << " *\n"
     << " * int " << entryOf(request) << "(inputs..., outputs...) computes the "
     << "compiled function. Every\n"
     << " * buffer is C-contiguous (row-major) with the shape below. Returns "
        "0. Not reentrant:\n"
     << " * intermediates live in static storage, so calls must not "
        "overlap. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdbool.h>\n#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "#define " << macro << "_NUM_INPUTS " << request.inputs.size() << "\n"
     << "#define " << macro << "_NUM_OUTPUTS " << request.outputs.size()
     << "\n";
  auto describe = [&](bool input, size_t i, const TensorSignature &s) {
    int64_t count = 1;
    for (int64_t size : s.shape)
      count *= size;
    std::string name = upper(parameter(input, i));
    os << "/* " << parameter(input, i) << ": " << s.dtype << dims(s)
       << " */\n#define " << macro << "_" << name << "_SIZE " << count << "\n";
  };
  for (size_t i = 0; i < request.inputs.size(); ++i)
    describe(true, i, request.inputs[i]);
  for (size_t i = 0; i < request.outputs.size(); ++i)
    describe(false, i, request.outputs[i]);
  os << "\n"
     << prototype(request)
     << ";\n\n/* The same with the buffers' addresses in two arrays. */\n"
     << "int " << entryOf(request)
     << "_packed(void *const *cuvil_inputs, void *const *cuvil_outputs);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return text;
}

/// The entry points after the kernel EmitC printed: the ABI function casts
/// each pointer to the kernel's array parameter, the packed one unpacks.
std::string entryPoints(const LoadRequest &request) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // `float x[64][256]` is `float (*x)[256]`; `float x[512]` is `float *x`.
  auto arrayCast = [&](const TensorSignature &s, const std::string &name) {
    std::string rest = dims(s).substr(dims(s).find(']') + 1);
    os << "(" << cType(s.dtype) << (rest.empty() ? " *" : " (*)" + rest) << ")"
       << name;
  };
  os << "\n" << prototype(request) << " {\n  " << kernelOf(request) << "(";
  llvm::ListSeparator argument(", ");
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    os << argument;
    arrayCast(request.inputs[i], parameter(true, i));
  }
  for (size_t i = 0; i < request.outputs.size(); ++i) {
    os << argument;
    arrayCast(request.outputs[i], parameter(false, i));
  }
  os << ");\n  return 0;\n}\n\nint " << entryOf(request)
     << "_packed(void *const *cuvil_inputs,\n    void *const *cuvil_outputs) "
        "{\n  return "
     << entryOf(request) << "(";
  llvm::ListSeparator unpack(", ");
  for (size_t i = 0; i < request.inputs.size(); ++i)
    os << unpack << "(const " << cType(request.inputs[i].dtype)
       << " *)cuvil_inputs[" << i << "]";
  for (size_t i = 0; i < request.outputs.size(); ++i)
    os << unpack << "(" << cType(request.outputs[i].dtype)
       << " *)cuvil_outputs[" << i << "]";
  os << ");\n}\n";
  return text;
}

/// The whole C file of the lowered (EmitC) module.
LogicalResult cSource(ModuleOp lowered, const LoadRequest &request,
                      std::string &out, std::string &error) {
  for (const TensorSignature &s :
       llvm::concat<const TensorSignature>(request.inputs, request.outputs))
    if (cType(s.dtype).empty()) {
      error = "the c target has no C type for " + s.dtype;
      return failure();
    }
  std::string kernel, diagnostics;
  llvm::raw_string_ostream os(kernel);
  {
    ScopedDiagnosticHandler collect(lowered.getContext(), [&](Diagnostic &d) {
      diagnostics += "\n" + d.str();
      return success();
    });
    if (failed(emitc::translateToCpp(lowered, os))) {
      error = "EmitC could not print the lowered module as C" + diagnostics;
      return failure();
    }
  }
  // Self-contained: the header's declarations come first (its include
  // guard lets a program include the .h as well), so the file compiles
  // whatever name it is saved under.
  out = "/* Generated by Cuvil (target c): the entry points " +
        entryOf(request) + " and " + entryOf(request) +
        "_packed. Compile with any C99 or\n * C++ compiler, e.g. cc -std=c99 "
        "-O2 -c FILE.c; link with -lm. */\n\n" +
        header(request) +
        "\n#include <math.h>\n#include <stddef.h>\n#include <stdlib.h>\n\n" +
        kernel + entryPoints(request);
  return success();
}

/// Compiles the C of `lowered` into a shared library at `library`.
LogicalResult compileLibrary(ModuleOp lowered, const LoadRequest &request,
                             StringRef library, std::string &error) {
  // The file holds the header's declarations itself (cSource): it alone is
  // compiled.
  std::string source;
  if (failed(cSource(lowered, request, source, error)))
    return failure();
  auto compiler = llvm::sys::findProgramByName("cc");
  if (!compiler) {
    error = "the c target runs its code through the system's C compiler, and "
            "there is no `cc` on PATH; fix: install gcc or clang";
    return failure();
  }
  return withTemporaryFile(
      source, "cuvil-c", "c",
      [&](StringRef sourcePath, std::string &message) -> LogicalResult {
        // -Bsymbolic: the entry points' calls bind to the library's own
        // functions.
        SmallVector<StringRef> args = {
            *compiler,        "-std=c99", "-O2",   "-fPIC",    "-shared",
            "-Wl,-Bsymbolic", "-o",       library, sourcePath, "-lm"};
        if (llvm::Error e = runTool(*compiler, args, library)) {
          message = "the C compiler failed on the generated C: " +
                    llvm::toString(std::move(e));
          return failure();
        }
        return success();
      },
      error);
}

class CTarget : public TargetBackend {
public:
  StringRef name() const override { return "c"; }
  StringRef description() const override {
    return "dependency-free C99 through EmitC: a .c and .h, run in process "
           "through the system's C compiler";
  }

  void registerDialects(DialectRegistry &registry) const override {
    registry.insert<emitc::EmitCDialect>();
  }
  void registerPasses() const override { registerCuvilCPasses(); }

  void buildPhases(const TargetOptions &options,
                   PipelineBuilder &p) const override;

  std::string cacheKeyMaterial(const TargetOptions &) const override {
    return "c99|cc -O2";
  }

  void prepareForLowering(ModuleOp module) const override {
    renameFunctions(module, "cuvil_", "_kernel");
  }

  FailureOr<std::unique_ptr<::cuvil::Executable>>
  load(ModuleOp lowered, const LoadRequest &request,
       std::string &error) const override {
    std::unique_ptr<llvm::MemoryBuffer> bytes = buildInTemporaryFile(
        "cuvil-c", "so",
        [&](StringRef path, std::string &message) {
          return compileLibrary(lowered, request, path, message);
        },
        error);
    if (!bytes)
      return failure();
    std::string symbol = entryOf(request) + "_packed";
    auto executable = ::cuvil::loadCodeFromMemory(
        bytes->getBuffer(), "cuvil_c_" + entryOf(request),
        [&](const std::string &file, std::string &message) {
          return ::cuvil::PackedCExecutable::load(file, symbol, message);
        },
        error);
    if (!executable)
      return failure();
    return executable;
  }

  std::string cacheExtension() const override { return ".so"; }
  LogicalResult storeInCache(ModuleOp lowered, const LoadRequest &request,
                             StringRef path,
                             std::string &error) const override {
    return compileLibrary(lowered, request, path, error);
  }
  FailureOr<std::unique_ptr<::cuvil::Executable>>
  loadFromCache(StringRef path, const LoadRequest &request,
                std::string &error) const override {
    auto executable = ::cuvil::PackedCExecutable::load(
        path.str(), entryOf(request) + "_packed", error);
    if (!executable)
      return failure();
    return executable;
  }

  std::vector<IRStage> irStages() const override {
    return {IRStage::Lowered, IRStage::CSource};
  }
  LogicalResult printStage(ModuleOp lowered, IRStage stage,
                           const LoadRequest &request, std::string &out,
                           std::string &error) const override {
    if (stage != IRStage::CSource)
      return TargetBackend::printStage(lowered, stage, request, out, error);
    return cSource(lowered, request, out, error);
  }

  std::vector<ArtifactKind> artifacts() const override {
    return {ArtifactKind::CSource, ArtifactKind::CHeader};
  }
  LogicalResult emit(ModuleOp lowered, ArtifactKind kind,
                     const LoadRequest &request, StringRef path,
                     std::string &error) const override {
    std::string content;
    if (kind == ArtifactKind::CHeader)
      content = header(request);
    else if (kind != ArtifactKind::CSource)
      return TargetBackend::emit(lowered, kind, request, path, error);
    else if (failed(cSource(lowered, request, content, error)))
      return failure();
    return writeFile(path, content, error);
  }
};

void CTarget::buildPhases(const TargetOptions &, PipelineBuilder &p) const {
  // No schedule: the C compiler vectorizes the plain loops it is given.
  p.addBufferization();
  // C arrays cannot be views of a byte arena: buffers share storage of
  // their own type instead.
  p.add(Phase::Bufferize, "cuvil-plan-memory", "views=0", "func.func",
        PipelineBuilder::Need::Optional);
  p.add(Phase::Bufferize, "convert-linalg-to-loops");
  p.add(Phase::Bufferize, "canonicalize");

  p.add(Phase::Lower, "cuvil-static-buffers", "target=c keep-alignment=0");
  p.add(Phase::Lower, "fold-memref-alias-ops");
  p.add(Phase::Lower, "lower-affine");
  p.add(Phase::Lower, "arith-expand");
  p.add(Phase::Lower, "canonicalize");
  p.add(Phase::Lower, "cuvil-c-to-emitc");
}

} // namespace

std::unique_ptr<TargetBackend> c::createCTarget() {
  return std::make_unique<CTarget>();
}
