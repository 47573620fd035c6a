//===- Linker.cpp - LLD inside the compiler's process --------------------===//
//
// The CPU target links every compiled function into a shared library and the
// wasm target into a module. A linker process costs its start-up: 16 ms for
// ld.bfd, 32 ms for ld.lld (which maps and relocates all of libLLVM first)
// and as much again for the compiler driver in front of it, against 3-5 ms
// for LLD's own work on an MLP's object. So a link can run LLD's driver in
// this process, where libLLVM is already loaded.
//
// Once per process: LLD 19's drivers keep pointers into the memory of the
// link they finished, and the next link in the process wrote through one
// (valgrind: writeResult writing into a block the previous link's context
// freed, even after the driver's own reset of its globals), which corrupted
// the heap in a test run one time in four. So the first link of a process,
// the one a cold start waits for, runs here, inside a crash recovery context
// (LLD's fatal errors and crashes would otherwise end the process); the
// later ones, and every link with CUVIL_LINKER=external, run the linker's
// program (ld.lld-19, wasm-ld-19) with the same arguments.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/TargetSupport.h"

#include "lld/Common/CommonLinkerContext.h"
#include "lld/Common/Driver.h"
#include "lld/Common/ErrorHandler.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

LLD_HAS_DRIVER(elf)
LLD_HAS_DRIVER(wasm)

using namespace mlir::cuvil;

namespace {

/// Whether this process has run LLD's driver (see the file's comment).
std::mutex linkerMutex;
bool lldUsed = false;

bool externalLinkerRequested() {
  const char *value = std::getenv("CUVIL_LINKER");
  return value && llvm::StringRef(value) == "external";
}

/// The linker's program for `flavor` (LLVM 19's first), or "".
std::string linkerProgram(LinkerFlavor flavor) {
  return flavor == LinkerFlavor::Elf ? findProgram({"ld.lld-19", "ld.lld"})
                                     : findProgram({"wasm-ld-19", "wasm-ld"});
}

/// Runs LLD's `flavor` driver on `args` if this process has not yet: its
/// result, or nothing where it did not run or stopped on a fatal error or
/// crashed.
std::optional<llvm::Error> linkInProcess(LinkerFlavor flavor,
                                         llvm::ArrayRef<llvm::StringRef> args,
                                         llvm::StringRef output) {
  std::lock_guard<std::mutex> lock(linkerMutex);
  if (lldUsed)
    return std::nullopt;
  lldUsed = true;
  // LLD's drivers take C strings, the program's name first (it picks the
  // flavor).
  std::vector<std::string> strings;
  strings.push_back(flavor == LinkerFlavor::Elf ? "ld.lld" : "wasm-ld");
  for (llvm::StringRef arg : args)
    strings.push_back(arg.str());
  llvm::SmallVector<const char *> argv;
  for (const std::string &s : strings)
    argv.push_back(s.c_str());

  std::string messages;
  llvm::raw_string_ostream stream(messages);
  auto driver =
      flavor == LinkerFlavor::Elf ? &lld::elf::link : &lld::wasm::link;
  bool linked = false;
  // With recovery enabled LLD's fatal() and a crash inside it return here
  // instead of ending the process; the handlers go again after the link.
  llvm::CrashRecoveryContext::Enable();
  bool returned = llvm::CrashRecoveryContext().RunSafely([&] {
    linked = driver(argv, stream, stream, /*exitEarly=*/false,
                    /*disableOutput=*/false);
    // LLD 19 resets its driver's globals (the synthetic and output
    // sections) only on its error path: without it they would point into
    // the memory the context frees until the process exits.
    if (lld::errorHandler().cleanupCallback)
      lld::errorHandler().cleanupCallback();
    lld::CommonLinkerContext::destroy();
  });
  llvm::CrashRecoveryContext::Disable();
  if (!returned)
    return std::nullopt; // a fatal error or a crash: the program tries
  if (linked)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(), "writing %s with LLD failed: %s",
      output.str().c_str(), llvm::StringRef(messages).trim().str().c_str());
}

} // namespace

llvm::Error mlir::cuvil::runLinker(LinkerFlavor flavor,
                                   llvm::ArrayRef<llvm::StringRef> args,
                                   llvm::StringRef output) {
  if (!externalLinkerRequested())
    if (std::optional<llvm::Error> linked = linkInProcess(flavor, args, output))
      return std::move(*linked);
  std::string program = linkerProgram(flavor);
  if (program.empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "cannot write %s: no %s on PATH to link it with (LLD inside this "
        "process is %s); fix: install Debian's lld-19",
        output.str().c_str(),
        flavor == LinkerFlavor::Elf ? "ld.lld-19" : "wasm-ld-19",
        externalLinkerRequested() ? "off: CUVIL_LINKER=external"
                                  : "for a process's first link only");
  llvm::SmallVector<llvm::StringRef> argv = {program};
  argv.append(args.begin(), args.end());
  return runTool(program, argv, output);
}
