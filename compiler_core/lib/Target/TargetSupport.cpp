//===- TargetSupport.cpp - Running the system's compiler and linker
//----------===//

#include "cuvil/Target/TargetSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>
#include <vector>

/// Runs a tool (linker, compiler) with its diagnostics captured into the error.
/// The child gets an environment built with getenv: the `environ` array a
/// library loaded with RTLD_DEEPBIND sees can be the C library's stale initial
/// one, not the process's (see cuvil/_native.py), and without PATH the compiler
/// driver cannot find `ld`.
llvm::Error mlir::cuvil::runTool(llvm::StringRef program,
                                 llvm::ArrayRef<llvm::StringRef> args,
                                 llvm::StringRef output) {
  std::vector<std::string> variables;
  for (const char *name : {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL",
                           "COMPILER_PATH", "LIBRARY_PATH", "GCC_EXEC_PREFIX"})
    if (const char *value = std::getenv(name))
      variables.push_back(std::string(name) + "=" + value);
  llvm::SmallVector<llvm::StringRef> environment(variables.begin(),
                                                 variables.end());
  llvm::SmallString<128> log;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("cuvil-tool", "log", log))
    return llvm::createStringError(ec, "cannot create the log file of " +
                                           program.str());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  std::string errorMessage;
  int rc = llvm::sys::ExecuteAndWait(program, args, environment, redirects, 0,
                                     0, &errorMessage);
  std::string diagnostics;
  if (auto text = llvm::MemoryBuffer::getFile(log))
    diagnostics = (*text)->getBuffer().trim().str();
  llvm::sys::fs::remove(log);
  if (rc == 0)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(), "writing %s with %s failed (exit %d): %s",
      output.str().c_str(), program.str().c_str(), rc,
      diagnostics.empty() ? errorMessage.c_str() : diagnostics.c_str());
}

mlir::LogicalResult mlir::cuvil::writeFile(llvm::StringRef path,
                                           llvm::StringRef content,
                                           std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path.str() + ": " + ec.message();
    return failure();
  }
  os << content;
  return success();
}

mlir::LogicalResult mlir::cuvil::takeError(llvm::Error e, std::string &error) {
  if (!e)
    return success();
  error = llvm::toString(std::move(e));
  return failure();
}

/// Runs `use` on a fresh temporary file's path and removes the file after.
static mlir::LogicalResult
onTemporaryFile(llvm::StringRef prefix, llvm::StringRef suffix,
                llvm::StringRef purpose,
                llvm::function_ref<mlir::LogicalResult(llvm::StringRef)> use,
                std::string &error) {
  llvm::SmallString<128> path;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile(prefix, suffix, path)) {
    error =
        "cannot create a temporary file" + purpose.str() + ": " + ec.message();
    return mlir::failure();
  }
  mlir::LogicalResult result = use(path);
  llvm::sys::fs::remove(path);
  return result;
}

std::unique_ptr<llvm::MemoryBuffer> mlir::cuvil::buildInTemporaryFile(
    llvm::StringRef prefix, llvm::StringRef suffix,
    llvm::function_ref<LogicalResult(llvm::StringRef, std::string &)> build,
    std::string &error) {
  std::unique_ptr<llvm::MemoryBuffer> bytes;
  (void)onTemporaryFile(
      prefix, suffix, " for compiled code",
      [&](llvm::StringRef path) -> LogicalResult {
        if (failed(build(path, error)))
          return failure();
        bytes = readFile(path, error);
        return success(bytes != nullptr);
      },
      error);
  return bytes;
}

void mlir::cuvil::renameFunctions(ModuleOp module, llvm::StringRef prefix,
                                  llvm::StringRef suffix) {
  module.walk([&](func::FuncOp func) {
    if (!func.isDeclaration())
      func.setSymName((prefix + func.getSymName() + suffix).str());
  });
}

mlir::LogicalResult mlir::cuvil::withTemporaryFile(
    llvm::StringRef content, llvm::StringRef prefix, llvm::StringRef suffix,
    llvm::function_ref<LogicalResult(llvm::StringRef, std::string &)> use,
    std::string &error) {
  return onTemporaryFile(
      prefix, suffix, "",
      [&](llvm::StringRef path) {
        return succeeded(writeFile(path, content, error)) ? use(path, error)
                                                          : failure();
      },
      error);
}

std::unique_ptr<llvm::MemoryBuffer> mlir::cuvil::readFile(llvm::StringRef path,
                                                          std::string &error) {
  auto read = llvm::MemoryBuffer::getFile(path);
  if (!read) {
    error = "cannot read " + path.str() + ": " + read.getError().message();
    return nullptr;
  }
  return std::move(*read);
}

std::string mlir::cuvil::findProgram(llvm::ArrayRef<llvm::StringRef> names) {
  for (llvm::StringRef name : names)
    if (auto path = llvm::sys::findProgramByName(name))
      return *path;
  for (llvm::StringRef name : names)
    if (auto path =
            llvm::sys::findProgramByName(name, {"/usr/lib/llvm-19/bin"}))
      return *path;
  return "";
}
