//===- PipelineTest.cpp - Every target's pipeline parses, phases in order -===//

#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Target/TargetBackend.h"

#include <gtest/gtest.h>

using namespace mlir::cuvil;
using ::cuvil::Phase;

namespace {

TEST(Pipelines, EveryTargetParsesForEveryOptionCombination) {
  registerBuiltinTargets();
  std::vector<std::string> names = TargetRegistry::names();
  ASSERT_FALSE(names.empty());
  for (const std::string &name : names)
    for (bool fusion : {true, false})
      for (bool parallel : {true, false})
        for (int lanes : {0, 4, 8, 16}) {
          TargetOptions options;
          options.enableFusion = fusion;
          options.parallel = parallel;
          options.vectorLanes = lanes;
          PipelineBuilder pipeline =
              buildPipeline(*TargetRegistry::lookup(name), options);
          std::string error;
          EXPECT_TRUE(pipeline.verify(error))
              << name << " fusion=" << fusion << " parallel=" << parallel
              << " lanes=" << lanes << ": " << error;
          EXPECT_FALSE(pipeline.steps().empty());
        }
}

TEST(Pipelines, PhasesRunInTableOrder) {
  registerBuiltinTargets();
  for (const std::string &name : TargetRegistry::names()) {
    PipelineBuilder pipeline =
        buildPipeline(*TargetRegistry::lookup(name), TargetOptions());
    Phase previous = Phase::Graph;
    for (const PipelineBuilder::Step &step : pipeline.steps()) {
      EXPECT_GE(step.phase, previous) << name << ": " << step.name;
      previous = step.phase;
    }
    // The neutral phases come first, then the target's own.
    EXPECT_EQ(pipeline.steps().front().phase, Phase::Graph);
    EXPECT_GT(pipeline.steps().back().phase, ::cuvil::kLastOptimizedPhase);
  }
}

TEST(Pipelines, OptionalPassesComeFromWhereTheyAreAdded) {
  registerBuiltinTargets();
  PipelineBuilder pipeline =
      buildPipeline(*TargetRegistry::lookup("cpu"), TargetOptions());
  auto find = [&](const std::string &name, Phase phase) {
    for (const PipelineBuilder::Step &step : pipeline.steps())
      if (step.name == name && step.phase == phase)
        return &step;
    return static_cast<const PipelineBuilder::Step *>(nullptr);
  };
  ASSERT_TRUE(find("cuvil-fold-constants", Phase::Graph));
  EXPECT_TRUE(find("cuvil-fold-constants", Phase::Graph)->optional);
  EXPECT_EQ(find("cuvil-fold-constants", Phase::Graph)->pipeline,
            "func.func(cuvil-fold-constants)");
  // Cleanups are optional where the phase table says they only tidy up.
  EXPECT_TRUE(find("cse", Phase::Fusion)->optional);
  EXPECT_FALSE(find("canonicalize", Phase::Bufferize)->optional);
  EXPECT_FALSE(find("convert-cuvil-to-linalg", Phase::Linalg)->optional);
  // Without fusion the fusion phase is empty.
  TargetOptions unfused;
  unfused.enableFusion = false;
  PipelineBuilder unfusedPipeline =
      buildPipeline(*TargetRegistry::lookup("cpu"), unfused);
  for (const auto &step : unfusedPipeline.steps())
    EXPECT_NE(step.phase, Phase::Fusion) << step.name;
}

TEST(Pipelines, ABrokenStepIsReportedWithItsPhase) {
  PipelineBuilder pipeline;
  pipeline.add(Phase::Linalg, "no-such-pass");
  std::string error;
  EXPECT_FALSE(pipeline.verify(error));
  EXPECT_NE(error.find("no-such-pass"), std::string::npos) << error;
  EXPECT_NE(error.find("'linalg'"), std::string::npos) << error;

  PipelineBuilder badOption;
  badOption.add(Phase::Schedule, "cuvil-cpu-schedule", "no-such-option=1");
  EXPECT_FALSE(badOption.verify(error));
  EXPECT_NE(error.find("cuvil-cpu-schedule"), std::string::npos) << error;
}

TEST(Phases, NameTableRoundTrips) {
  for (const ::cuvil::PhaseInfo &info : ::cuvil::phases()) {
    EXPECT_EQ(::cuvil::parsePhase(info.name), info.phase);
    EXPECT_STREQ(::cuvil::phaseName(info.phase), info.name);
  }
  EXPECT_FALSE(::cuvil::parsePhase("nonexistent"));
  // The name lookups index the tables by enum value: each table lists its
  // enum in order (the c target's kinds were once appended out of order).
  for (const ::cuvil::IRStageInfo &info : ::cuvil::irStages()) {
    EXPECT_EQ(::cuvil::parseIRStage(info.name), info.stage);
    EXPECT_STREQ(::cuvil::irStageName(info.stage), info.name);
  }
  for (const ::cuvil::ArtifactInfo &info : ::cuvil::artifactKinds()) {
    EXPECT_EQ(::cuvil::parseArtifactKind(info.name), info.kind);
    EXPECT_STREQ(::cuvil::artifactName(info.kind), info.name);
  }
}

} // namespace
