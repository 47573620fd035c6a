//===- TargetBindings.cpp - Targets, devices and phase tables for Python --===//
//
// Python reads the registry and the name tables from here; it keeps no list
// of targets, phases, stages or artifact kinds of its own.
//
//===----------------------------------------------------------------------===//

#include "TargetBindings.h"

#include "cuvil/Driver/Compiler.h"
#include "cuvil/Pipelines/Phases.h"

#include <pybind11/stl.h>

namespace py = pybind11;

void cuvil::python::bindTargets(py::module_ &m) {
  m.def(
      "available_targets",
      [] {
        py::list list;
        for (const TargetInfo &target : availableTargets())
          list.append(py::make_tuple(target.name, target.description,
                                     target.deviceCount));
        return list;
      },
      "(name, description, device count) of every registered target");

  m.def(
      "parse_device",
      [](const std::string &device) {
        std::string target, error;
        int index = 0;
        if (!parseDevice(device, target, index, error))
          throw py::value_error(error);
        return py::make_tuple(target, index);
      },
      py::arg("device"),
      "'cuda:1' -> ('cuda', 1); ValueError naming the registered targets "
      "when it names none");

  m.def(
      "target_unavailable_reason",
      [](const std::string &target, int device) {
        py::gil_scoped_release release;
        return targetUnavailableReason(target, device);
      },
      py::arg("target"), py::arg("device") = 0,
      "Why code for the target's device cannot run here (no driver, no GPU), "
      "or '' when it can");

  m.def(
      "load_target_plugin",
      [](const std::string &path) {
        std::string error;
        if (!loadTargetPlugin(path, error))
          throw py::value_error(error);
      },
      py::arg("path"), "Loads a target plugin (.so) and registers its targets");

  m.def("phases", [] {
    py::list list;
    for (const PhaseInfo &info : cuvil::phases())
      list.append(
          py::make_tuple(info.name, info.description, info.targetNeutral));
    return list;
  });
  m.def("ir_stages", [] {
    py::list list;
    for (const IRStageInfo &info : irStages())
      list.append(py::make_tuple(info.name, info.description));
    return list;
  });
  m.def("artifact_kinds", [] {
    py::list list;
    for (const ArtifactInfo &info : artifactKinds())
      list.append(py::make_tuple(info.name, info.description, info.extension,
                                 info.binary));
    return list;
  });
}
