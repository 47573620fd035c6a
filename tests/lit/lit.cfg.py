"""lit configuration for Cuvil's IR tests (cuvil-opt + FileCheck)."""

import os

import lit.formats

config.name = "Cuvil"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cuvil_obj_root, "tests", "lit")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in"]

config.substitutions.append(("%cuvil_lib", os.path.join(config.cuvil_obj_root, "lib")))
config.substitutions.append(("%cuvil_opt", os.path.join(config.cuvil_tools_dir, "cuvil-opt")))
config.substitutions.append(("FileCheck", os.path.join(config.llvm_tools_dir, "FileCheck")))
config.substitutions.append(("%not", os.path.join(config.llvm_tools_dir, "not")))
config.environment["PATH"] = os.pathsep.join(
    [config.cuvil_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)
config.substitutions.append(("%cuvil_graph", os.path.join(config.cuvil_tools_dir, "cuvil-graph")))
