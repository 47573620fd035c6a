//===- TargetRegistryTest.cpp - Targets through the driver's public API ---===//
//
// The built-in cpu target, device strings, and a target added by a plugin
// (tests/targets/null) compiling through the same driver, pipeline and disk
// cache as the CPU.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Driver/Compiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace {

const char *kModule = R"mlir(
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cuvil.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(#node)
  return %0 : tensor<4xf32>
}
#node = loc("node_7"("model.onnx":3:5))
)mlir";

const char *kNamedGemm = R"mlir(
func.func @gemm(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = cuvil.matmul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc(#node)
  return %0 : tensor<8x8xf32>
}
#node = loc("node_7"("model.onnx":3:5))
)mlir";

bool hasTarget(const std::string &name) {
  for (const cuvil::TargetInfo &info : cuvil::availableTargets())
    if (info.name == name)
      return true;
  return false;
}

std::string tempDir() {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("cuvil-targets", dir));
  return std::string(dir);
}

std::vector<std::string> filesIn(const std::string &dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Targets, CpuAndCAreBuiltIn) {
  EXPECT_TRUE(hasTarget("cpu"));
  EXPECT_TRUE(hasTarget("c"));
  std::string target, error;
  int index = -1;
  ASSERT_TRUE(cuvil::parseDevice("cpu", target, index, error)) << error;
  EXPECT_EQ(target, "cpu");
  EXPECT_EQ(index, 0);
  ASSERT_TRUE(cuvil::parseDevice("cpu:0", target, index, error)) << error;
}

TEST(Targets, UnknownTargetsAndDevicesNameWhatExists) {
  std::string target, error;
  int index = 0;
  EXPECT_FALSE(cuvil::parseDevice("nonexistent:0", target, index, error));
  EXPECT_NE(error.find("unknown target 'nonexistent'"), std::string::npos);
  EXPECT_NE(error.find("cpu"), std::string::npos) << error;
  EXPECT_FALSE(cuvil::parseDevice("cpu:1", target, index, error));
  EXPECT_NE(error.find("no device 1"), std::string::npos) << error;
  EXPECT_FALSE(cuvil::parseDevice("cpu:x", target, index, error));
  EXPECT_NE(error.find("bad device"), std::string::npos) << error;

  cuvil::CompileOptions options;
  options.target = "nonexistent";
  error.clear();
  EXPECT_FALSE(cuvil::compile(kModule, "add", options, error));
  EXPECT_NE(error.find("registered targets: c, cpu, cuda or wasm"),
            std::string::npos)
      << error;
}

TEST(Targets, PluginTargetCompilesThroughTheDriverAndCache) {
  std::string error;
  ASSERT_TRUE(cuvil::loadTargetPlugin(CUVIL_NULL_TARGET_PLUGIN, error))
      << error;
  ASSERT_TRUE(cuvil::loadTargetPlugin(CUVIL_NULL_TARGET_PLUGIN, error));
  EXPECT_TRUE(hasTarget("null"));

  std::string cache = tempDir();
  cuvil::CompileOptions options;
  options.target = "null";
  options.cacheDir = cache;
  auto fn = cuvil::compile(kModule, "add", options, error);
  ASSERT_TRUE(fn) << error;
  EXPECT_EQ(fn->target(), "null");
  EXPECT_FALSE(fn->fromCache());
  // The neutral phases ran, then the plugin's bufferize phase.
  ASSERT_FALSE(fn->snapshots().empty());
  EXPECT_EQ(fn->snapshots().back().name, "one-shot-bufferize");
  EXPECT_EQ(fn->snapshots().back().phase, cuvil::Phase::Bufferize);

  std::vector<float> a(4, 1), b(4, 2), out(4, 7);
  void *inputs[] = {a.data(), b.data()};
  void *outputs[] = {out.data()};
  fn->call(inputs, outputs);
  EXPECT_EQ(out, std::vector<float>(4, 0)); // the null target writes zeros

  std::string lowered;
  ASSERT_TRUE(fn->ir(cuvil::IRStage::Lowered, lowered, error)) << error;
  EXPECT_NE(lowered.find("memref<4xf32>"), std::string::npos);
  const std::string firstLowered = lowered;
  EXPECT_FALSE(fn->ir(cuvil::IRStage::Assembly, lowered, error));
  EXPECT_NE(error.find("no IR stage 'asm'"), std::string::npos) << error;
  EXPECT_FALSE(fn->emit(cuvil::ArtifactKind::Object, cache + "/x.o", error));
  EXPECT_NE(error.find("cannot write artifact 'obj'"), std::string::npos)
      << error;

  // One cache entry, with the target's extension, and its text index; a
  // second compile hits them, and its IR is rebuilt when asked for.
  std::vector<std::string> entries = filesIn(cache);
  std::sort(entries.begin(), entries.end(), [](auto &a, auto &b) {
    return llvm::StringRef(a).ends_with(".index") <
           llvm::StringRef(b).ends_with(".index");
  });
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_NE(entries[0].find(".null.mlir"), std::string::npos) << entries[0];
  EXPECT_NE(entries[1].find(".index"), std::string::npos) << entries[1];
  auto again = cuvil::compile(kModule, "add", options, error);
  ASSERT_TRUE(again) << error;
  EXPECT_TRUE(again->fromCache());
  EXPECT_EQ(again->fingerprint(), fn->fingerprint());
  std::string rebuilt;
  ASSERT_TRUE(again->ir(cuvil::IRStage::Lowered, rebuilt, error)) << error;
  EXPECT_EQ(rebuilt, firstLowered);

  // The CPU compiles the same IR under another key, into the same folder.
  options.target = "cpu";
  auto onCpu = cuvil::compile(kModule, "add", options, error);
  ASSERT_TRUE(onCpu) << error;
  EXPECT_FALSE(onCpu->fromCache());
  EXPECT_EQ(filesIn(cache).size(), 4u);
  onCpu->call(inputs, outputs);
  EXPECT_EQ(out, std::vector<float>(4, 3));
  llvm::sys::fs::remove_directories(cache);
}

TEST(Targets, IRThatStopsVerifyingIsReportedWithItsPhaseAndLastPass) {
  std::string error;
  ASSERT_TRUE(cuvil::loadTargetPlugin(CUVIL_NULL_TARGET_PLUGIN, error))
      << error;
  ASSERT_TRUE(hasTarget("null-broken"));
  cuvil::CompileOptions options;
  options.target = "null-broken";
  // The default passes are verified where each phase ends: the error names
  // the phase, its last pass and how to find the pass that broke the IR.
  EXPECT_FALSE(cuvil::compile(kModule, "add", options, error));
  EXPECT_NE(error.find("the IR after the 'bufferize' phase (its last pass "
                       "'cuvil-test-break-ir') does not verify"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("CUVIL_CAPTURE_SNAPSHOTS=1"), std::string::npos)
      << error;
  EXPECT_NE(error.find("entry block"), std::string::npos) << error;
  // With snapshots every pass is verified: the failing pass is named.
  options.captureSnapshots = true;
  EXPECT_FALSE(cuvil::compile(kModule, "add", options, error));
  EXPECT_NE(error.find("compilation failed in pass 'cuvil-test-break-ir'"),
            std::string::npos)
      << error;
}

TEST(Targets, KernelsKeepTheModelNodeName) {
  cuvil::CompileOptions options;
  std::string error;
  auto fn = cuvil::compile(kNamedGemm, "gemm", options, error);
  ASSERT_TRUE(fn) << error;
  ASSERT_FALSE(fn->kernels().empty());
  const cuvil::KernelInfo &kernel = fn->kernels().front();
  EXPECT_EQ(kernel.source.name, "node_7");
  EXPECT_EQ(kernel.source.file, "model.onnx");
  EXPECT_EQ(kernel.source.line, 3);
  EXPECT_EQ(kernel.location, "model.onnx:3:5");
}

} // namespace
