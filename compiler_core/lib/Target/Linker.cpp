//===- Linker.cpp - LLD inside the compiler's process --------------------===//
//
// The CPU target links every compiled function into a shared library and the
// wasm target into a module. A linker process costs its start-up: 16 ms for
// ld.bfd, 32 ms for ld.lld (which maps and relocates all of libLLVM first)
// and as much again for the compiler driver in front of it, against 3-5 ms
// for LLD's own work on an MLP's object. So the links run LLD's drivers in
// this process, where libLLVM is already loaded: one link at a time (LLD
// keeps its state in globals) and inside a crash recovery context, since
// LLD's fatal errors and crashes would otherwise end the process. After
// one, LLD cannot be trusted in this process again and the links run the
// linker's program with the same arguments.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/TargetSupport.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

LLD_HAS_DRIVER(elf)
LLD_HAS_DRIVER(wasm)

using namespace mlir::cuvil;

namespace {

/// One link at a time; false once LLD said it cannot run again here.
std::mutex linkerMutex;
bool lldUsable = true;

bool externalLinkerRequested() {
  const char *value = std::getenv("CUVIL_LINKER");
  return value && llvm::StringRef(value) == "external";
}

/// The linker's program for `flavor` (LLVM 19's first), or "".
std::string linkerProgram(LinkerFlavor flavor) {
  return flavor == LinkerFlavor::Elf ? findProgram({"ld.lld-19", "ld.lld"})
                                     : findProgram({"wasm-ld-19", "wasm-ld"});
}

/// Runs LLD's `flavor` driver on `args`; false where LLD was not run.
bool linkInProcess(LinkerFlavor flavor, llvm::ArrayRef<llvm::StringRef> args,
                   llvm::StringRef output, llvm::Error &result) {
  std::lock_guard<std::mutex> lock(linkerMutex);
  if (!lldUsable)
    return false;
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
  // With recovery enabled LLD's fatal() and a crash inside it return here
  // instead of ending the process; the handlers go again after the link.
  llvm::CrashRecoveryContext::Enable();
  lld::Result linked = lld::lldMain(
      argv, stream, stream,
      {{lld::Gnu, &lld::elf::link}, {lld::Wasm, &lld::wasm::link}});
  llvm::CrashRecoveryContext::Disable();
  if (!linked.canRunAgain)
    lldUsable = false;
  if (linked.retCode == 0) {
    result = llvm::Error::success();
    return true;
  }
  result = llvm::createStringError(
      llvm::inconvertibleErrorCode(), "writing %s with LLD failed (%s): %s",
      output.str().c_str(),
      linked.canRunAgain ? "exit 1"
                         : "it stopped on a fatal error or crashed; later "
                           "links run the linker's program",
      llvm::StringRef(messages).trim().str().c_str());
  return true;
}

} // namespace

llvm::Error mlir::cuvil::runLinker(LinkerFlavor flavor,
                                   llvm::ArrayRef<llvm::StringRef> args,
                                   llvm::StringRef output) {
  if (!externalLinkerRequested()) {
    llvm::Error result = llvm::Error::success();
    if (linkInProcess(flavor, args, output, result))
      return result;
    llvm::consumeError(std::move(result));
  }
  std::string program = linkerProgram(flavor);
  if (program.empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "cannot write %s: no %s on PATH to link it with (LLD inside this "
        "process is %s); fix: install Debian's lld-19",
        output.str().c_str(),
        flavor == LinkerFlavor::Elf ? "ld.lld-19" : "wasm-ld-19",
        externalLinkerRequested() ? "off: CUVIL_LINKER=external"
                                  : "unusable after an earlier failure");
  llvm::SmallVector<llvm::StringRef> argv = {program};
  argv.append(args.begin(), args.end());
  return runTool(program, argv, output);
}
