//===- GraphJson.cpp - IR graphs as JSON, read back with every field checked
//===//
//
// cuvil-graph writes the graph of a snapshot as JSON; the Workbench reads it
// in another process. The reader trusts nothing: each field must have its
// type, each index must point into its table, and sizes are bounded, so a
// truncated or hostile document is an error message, not a crash.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Graph/IRGraph.h"

#include <nlohmann/json.hpp>

#include <climits>

namespace cuvil::graph {
namespace {

using nlohmann::json;

constexpr const char *kFormat = "cuvil-ir-graph";
constexpr int kVersion = 1;
constexpr size_t kMaxNodes = 1000000;
constexpr size_t kMaxEdges = 4000000;
constexpr size_t kMaxClusters = 1000000;
constexpr size_t kMaxLaunches = 100000;
constexpr size_t kMaxString = 65536;
/// Deeper nesting than any real loop nest; bounds the DOT writer's recursion.
constexpr int kMaxClusterDepth = 256;

json nodeJson(const Node &node) {
  return {{"id", node.id},
          {"op", node.opName},
          {"kind", opKindName(node.kind)},
          {"results", node.results},
          {"type", node.type},
          {"irLine", node.irLine},
          {"file", node.loc.file},
          {"line", node.loc.line},
          {"column", node.loc.column},
          {"locName", node.locName},
          {"cluster", node.cluster},
          {"ownsCluster", node.ownsCluster},
          {"collapsedOps", node.collapsedOps},
          {"changed", node.changed},
          {"fingerprint", node.fingerprint}};
}

json launchJson(const KernelLaunch &launch) {
  return {{"irLine", launch.irLine},
          {"kernel", launch.kernel},
          {"ops", launch.ops},
          {"file", launch.loc.file},
          {"line", launch.loc.line},
          {"column", launch.loc.column},
          {"grid", {launch.grid[0], launch.grid[1], launch.grid[2]}},
          {"block", {launch.block[0], launch.block[1], launch.block[2]}},
          {"staticSharedBytes", launch.staticSharedBytes},
          {"dynamicSharedBytes", launch.dynamicSharedBytes}};
}

/// Reads fields of one JSON object, remembering the first problem together
/// with the path of the field ("nodes[3].cluster").
class FieldReader {
public:
  FieldReader(const json &object, std::string path, std::string &error)
      : object(object), path(std::move(path)), error(error) {
    if (!object.is_object())
      fail("", "is not a JSON object");
  }

  bool ok() const { return error.empty(); }

  void string(const char *key, std::string &out) {
    const json *value = find(key);
    if (!value)
      return;
    if (!value->is_string())
      return fail(key, "is not a string");
    const std::string &text = value->get_ref<const std::string &>();
    if (text.size() > kMaxString)
      return fail(key,
                  "is longer than " + std::to_string(kMaxString) + " bytes");
    for (char c : text)
      if (static_cast<unsigned char>(c) < 0x20)
        return fail(key, "contains a control character");
    out = text;
  }

  /// An integer in [low, high].
  void integer(const char *key, int &out, long long low, long long high) {
    if (const json *value = find(key))
      checkInteger(*value, key, out, low, high);
  }

  /// Three integers in [low, high] ("grid": [x, y, z]).
  void triple(const char *key, int (&out)[3], long long low, long long high) {
    const json *value = find(key);
    if (!value)
      return;
    if (!value->is_array() || value->size() != 3)
      return fail(key, "is not an array of three integers");
    for (size_t i = 0; i < 3; ++i)
      checkInteger((*value)[i], key + ("[" + std::to_string(i) + "]"), out[i],
                   low, high);
  }

  /// Whether the object has `key`: for fields later versions added.
  bool has(const char *key) const {
    return ok() && object.find(key) != object.end();
  }

  void boolean(const char *key, bool &out) {
    const json *value = find(key);
    if (!value)
      return;
    if (!value->is_boolean())
      return fail(key, "is not true or false");
    out = value->get<bool>();
  }

  /// An array of at most `limit` elements.
  const json *array(const char *key, size_t limit) {
    const json *value = find(key);
    if (!value)
      return nullptr;
    if (!value->is_array()) {
      fail(key, "is not an array");
      return nullptr;
    }
    if (value->size() > limit) {
      fail(key, "has " + std::to_string(value->size()) +
                    " entries, more than the limit of " +
                    std::to_string(limit));
      return nullptr;
    }
    return value;
  }

  void fail(const std::string &key, const std::string &what) {
    if (!error.empty())
      return;
    std::string where = path;
    if (!key.empty())
      where += (where.empty() ? "" : ".") + key;
    error = (where.empty() ? "the document" : where) + " " + what;
  }

private:
  void checkInteger(const json &value, const std::string &key, int &out,
                    long long low, long long high) {
    if (!ok())
      return;
    if (!value.is_number_integer())
      return fail(key, "is not an integer");
    long long v = value.is_number_unsigned()
                      ? static_cast<long long>(std::min<unsigned long long>(
                            value.get<unsigned long long>(), LLONG_MAX))
                      : value.get<long long>();
    if (v < low || v > high)
      return fail(key, std::to_string(v) + " is outside [" +
                           std::to_string(low) + ", " + std::to_string(high) +
                           "]");
    out = static_cast<int>(v);
  }

  const json *find(const char *key) {
    if (!ok())
      return nullptr;
    auto it = object.find(key);
    if (it == object.end()) {
      fail(key, "is missing");
      return nullptr;
    }
    return &*it;
  }

  const json &object;
  std::string path;
  std::string &error;
};

constexpr long long kMaxInt = INT_MAX;

void readNode(const json &value, size_t index, size_t clusterCount, Node &node,
              std::string &error) {
  FieldReader r(value, "nodes[" + std::to_string(index) + "]", error);
  long long clusters = static_cast<long long>(clusterCount);
  r.integer("id", node.id, index, index);
  r.string("op", node.opName);
  std::string kind;
  r.string("kind", kind);
  if (r.ok() && !opKindFromName(kind, node.kind))
    r.fail("kind", "\"" + kind + "\" is not an op kind");
  r.string("results", node.results);
  r.string("type", node.type);
  r.integer("irLine", node.irLine, 0, kMaxInt);
  r.string("file", node.loc.file);
  r.integer("line", node.loc.line, 0, kMaxInt);
  r.integer("column", node.loc.column, 0, kMaxInt);
  r.string("locName", node.locName);
  r.integer("cluster", node.cluster, -1, clusters - 1);
  r.integer("ownsCluster", node.ownsCluster, -1, clusters - 1);
  r.integer("collapsedOps", node.collapsedOps, 0, kMaxInt);
  r.boolean("changed", node.changed);
  r.string("fingerprint", node.fingerprint);
}

void readEdge(const json &value, size_t index, size_t nodeCount, Edge &edge,
              std::string &error) {
  FieldReader r(value, "edges[" + std::to_string(index) + "]", error);
  long long last = static_cast<long long>(nodeCount) - 1;
  r.integer("from", edge.from, 0, last);
  r.integer("to", edge.to, 0, last);
  r.string("value", edge.value);
}

void readCluster(const json &value, size_t index, size_t nodeCount,
                 Cluster &cluster, std::string &error) {
  FieldReader r(value, "clusters[" + std::to_string(index) + "]", error);
  long long id = static_cast<long long>(index);
  r.integer("id", cluster.id, id, id);
  // Parents come first: nesting is a tree by construction.
  r.integer("parent", cluster.parent, -1, id - 1);
  r.integer("owner", cluster.owner, 0, static_cast<long long>(nodeCount) - 1);
  r.string("label", cluster.label);
}

void readLaunch(const json &value, size_t index, KernelLaunch &launch,
                std::string &error) {
  FieldReader r(value, "launches[" + std::to_string(index) + "]", error);
  r.integer("irLine", launch.irLine, 0, kMaxInt);
  r.string("kernel", launch.kernel);
  r.string("ops", launch.ops);
  r.string("file", launch.loc.file);
  r.integer("line", launch.loc.line, 0, kMaxInt);
  r.integer("column", launch.loc.column, 0, kMaxInt);
  r.triple("grid", launch.grid, -1, kMaxInt);
  r.triple("block", launch.block, -1, kMaxInt);
  r.integer("staticSharedBytes", launch.staticSharedBytes, -1, kMaxInt);
  r.integer("dynamicSharedBytes", launch.dynamicSharedBytes, -1, kMaxInt);
}

bool readGraph(const json &document, IRGraph &graph, std::string &error) {
  FieldReader r(document, "", error);
  std::string format;
  int version = 0;
  r.string("format", format);
  if (r.ok() && format != kFormat)
    r.fail("format", "is \"" + format + "\", not \"" + kFormat + "\"");
  r.integer("version", version, kVersion, kVersion);
  r.string("function", graph.function);
  r.integer("functionLine", graph.functionLine, 0, kMaxInt);
  r.integer("changedCount", graph.changedCount, 0, kMaxInt);
  r.integer("removedCount", graph.removedCount, 0, kMaxInt);
  const json *nodes = r.array("nodes", kMaxNodes);
  const json *edges = r.array("edges", kMaxEdges);
  const json *clusters = r.array("clusters", kMaxClusters);
  // Documents written before launches were recorded have none.
  const json *launches =
      r.has("launches") ? r.array("launches", kMaxLaunches) : nullptr;
  if (!r.ok())
    return false;

  graph.clusters.resize(clusters->size());
  std::vector<int> depth(clusters->size(), 0);
  for (size_t i = 0; i < clusters->size() && error.empty(); ++i) {
    Cluster &cluster = graph.clusters[i];
    readCluster((*clusters)[i], i, nodes->size(), cluster, error);
    if (!error.empty())
      break;
    depth[i] = cluster.parent < 0 ? 1 : depth[cluster.parent] + 1;
    if (depth[i] > kMaxClusterDepth)
      error = "clusters[" + std::to_string(i) + "] is nested more than " +
              std::to_string(kMaxClusterDepth) + " deep";
  }
  graph.nodes.resize(nodes->size());
  for (size_t i = 0; i < nodes->size() && error.empty(); ++i)
    readNode((*nodes)[i], i, clusters->size(), graph.nodes[i], error);
  graph.edges.resize(edges->size());
  for (size_t i = 0; i < edges->size() && error.empty(); ++i)
    readEdge((*edges)[i], i, nodes->size(), graph.edges[i], error);
  if (launches) {
    graph.launches.resize(launches->size());
    for (size_t i = 0; i < launches->size() && error.empty(); ++i)
      readLaunch((*launches)[i], i, graph.launches[i], error);
  }
  return error.empty();
}

} // namespace

std::string toJson(const IRGraph &graph) {
  json nodes = json::array();
  for (const Node &node : graph.nodes)
    nodes.push_back(nodeJson(node));
  json edges = json::array();
  for (const Edge &edge : graph.edges)
    edges.push_back(
        {{"from", edge.from}, {"to", edge.to}, {"value", edge.value}});
  json clusters = json::array();
  for (const Cluster &cluster : graph.clusters)
    clusters.push_back({{"id", cluster.id},
                        {"parent", cluster.parent},
                        {"owner", cluster.owner},
                        {"label", cluster.label}});
  json launches = json::array();
  for (const KernelLaunch &launch : graph.launches)
    launches.push_back(launchJson(launch));
  json document = {{"format", kFormat},
                   {"version", kVersion},
                   {"function", graph.function},
                   {"functionLine", graph.functionLine},
                   {"changedCount", graph.changedCount},
                   {"removedCount", graph.removedCount},
                   {"nodes", std::move(nodes)},
                   {"edges", std::move(edges)},
                   {"clusters", std::move(clusters)},
                   {"launches", std::move(launches)}};
  // File names in locations are not guaranteed to be UTF-8.
  return document.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

bool fromJson(const std::string &text, IRGraph &graph, std::string &error) {
  graph = IRGraph();
  error.clear();
  bool ok = false;
  try {
    json document = json::parse(text);
    ok = readGraph(document, graph, error);
  } catch (const json::parse_error &e) {
    error = std::string("the document is not valid JSON (") + e.what() + ")";
  } catch (const json::exception &e) {
    // Every access is type-checked first; this is a last line of defence.
    error = std::string("the document could not be read: ") + e.what();
  }
  if (!ok) {
    error = "graph JSON: " + error;
    graph = IRGraph();
  }
  return ok;
}

} // namespace cuvil::graph
