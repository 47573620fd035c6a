//===- GraphTool.h - IR graphs built by the cuvil-graph tool ----*- C++ -*-===//
//
// The Workbench does not link MLIR: the graph of a step's IR is built by
// cuvil-graph (MLIR's parser, op interfaces) in a child process and comes
// back as JSON, read with every field checked.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_GRAPHTOOL_H
#define CUVIL_WORKBENCH_GRAPHTOOL_H

#include "cuvil/Graph/IRGraph.h"

#include <QString>

namespace cuvil::workbench {

/// The cuvil-graph executable: $CUVIL_GRAPH, the one next to the
/// application, or the one of the build tree this was built in.
QString defaultGraphToolPath();

/// Builds the graph of `ir` with cuvil-graph --json, marking what changed
/// since `previousIr` (empty: nothing marked). Blocks until the tool ends or
/// `timeoutMs` passes (then it is killed); call it off the GUI thread. On
/// failure returns false and sets `error` for the user: the IR's own
/// problem ("line 3: ...") or why cuvil-graph could not run.
bool runGraphTool(const QString &ir, const QString &previousIr,
                  const graph::GraphOptions &options, graph::IRGraph &graph,
                  QString &error, int timeoutMs = 60000);

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_GRAPHTOOL_H
