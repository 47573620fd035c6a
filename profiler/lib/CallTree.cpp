//===- CallTree.cpp - Flame/icicle trees, their diff, search and zoom -----===//

#include "FormatSupport.h"
#include "cuvil/Profiler/Analysis.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <tuple>
#include <unordered_map>

namespace cuvil::profiler {
namespace {

/// A frame under its parent, by trace string ids: `node` is the model node
/// name's id (0 for none) and `opId` counts only for frames without one.
struct FrameKey {
  uint32_t parent, name, file, line, node;
  int64_t opId;
  bool operator==(const FrameKey &o) const {
    return parent == o.parent && name == o.name && file == o.file &&
           line == o.line && node == o.node && opId == o.opId;
  }
};

struct FrameKeyHash {
  size_t operator()(const FrameKey &k) const {
    uint64_t h = (uint64_t(k.parent) << 32 | k.name) * 0x9E3779B97F4A7C15ULL;
    h ^= (uint64_t(k.file) << 32 | k.line) + 0x7F4A7C15ULL + (h << 6);
    h ^= (uint64_t(k.node) << 32 ^ uint64_t(k.opId)) + (h >> 2);
    return std::hash<uint64_t>()(h);
  }
};

bool sortedForNesting(const Trace &trace) {
  for (size_t i = 1; i < trace.events.size(); ++i) {
    const Event &a = trace.events[i - 1], &b = trace.events[i];
    if (a.thread != b.thread     ? a.thread > b.thread
        : a.startNs != b.startNs ? a.startNs > b.startNs
                                 : a.durationNs < b.durationNs)
      return false;
  }
  return true;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// The id of the "node" argument's value of events with argument list
/// `args`, 0 when there is none; cached per list (events share them).
class NodeArgs {
public:
  explicit NodeArgs(const Trace &trace) : trace(trace) {}
  StringId of(const Event &e) {
    if (e.args == kNoArgs)
      return 0;
    auto [it, inserted] = cache.emplace(e.args, 0);
    if (inserted)
      for (const auto &[key, value] : trace.args[e.args])
        if (trace.str(key) == kNodeArg && !trace.str(value).empty())
          it->second = value;
    return it->second;
  }

private:
  const Trace &trace;
  std::unordered_map<uint32_t, StringId> cache;
};

/// Two spaces per level up to kMaxIndentDepth, then "[depth N]": indenting a
/// 100,000-frame stack would make the text quadratic in its depth.
constexpr uint32_t kMaxIndentDepth = 64;

void appendIndent(std::string &out, uint32_t depth) {
  if (depth <= kMaxIndentDepth) {
    out.append(2 * (depth - 1), ' ');
    return;
  }
  out.append(2 * (kMaxIndentDepth - 1), ' ');
  out += "[depth " + std::to_string(depth) + "] ";
}

} // namespace

std::string frameTitle(std::string_view name, std::string_view node,
                       uint32_t instance) {
  std::string out(name);
  if (!node.empty())
    out.append(" [").append(node).append("]");
  if (instance)
    out += " #" + std::to_string(instance);
  return out;
}

std::string frameLabel(std::string_view name, std::string_view node,
                       uint32_t instance, std::string_view file,
                       uint32_t line) {
  std::string out = frameTitle(name, node, instance);
  if (file.empty())
    return out;
  out.append(" (").append(file);
  if (line)
    out += ":" + std::to_string(line);
  return out + ")";
}

CallTree::CallTree() {
  nodeList.emplace_back();
  nodeList[0].name = "<root>";
}

bool CallTree::sameFrame(const Node &a, const Node &b) {
  return a.name == b.name && a.file == b.file && a.line == b.line &&
         a.node == b.node && (!a.node.empty() || a.opId == b.opId);
}

uint32_t CallTree::child(uint32_t parent, std::string_view name,
                         std::string_view file, uint32_t line,
                         std::string_view node) const {
  for (uint32_t c : nodeList[parent].children) {
    const Node &n = nodeList[c];
    if (n.name == name && n.file == file && n.line == line && n.node == node)
      return c;
  }
  return 0;
}

uint32_t CallTree::addChild(uint32_t parent, std::string_view name,
                            std::string_view file, uint32_t line) {
  Node frame;
  frame.name = std::string(name);
  frame.file = std::string(file);
  frame.line = line;
  return addChild(parent, frame);
}

uint32_t CallTree::addChild(uint32_t parent, const Node &frame) {
  for (uint32_t c : nodeList[parent].children)
    if (sameFrame(nodeList[c], frame))
      return c;
  Node node;
  static_cast<FlameFrame &>(node) = frame;
  node.opId = frame.opId;
  node.parent = parent;
  node.depth = nodeList[parent].depth + 1;
  auto id = static_cast<uint32_t>(nodeList.size());
  nodeList.push_back(std::move(node));
  nodeList[parent].children.push_back(id);
  return id;
}

void CallTree::addPath(const std::vector<const Node *> &frames,
                       int64_t weightNs) {
  uint32_t at = 0;
  for (const Node *frame : frames)
    at = addChild(at, *frame);
  nodeList[at].selfNs += weightNs;
  nodeList[at].count += 1;
}

void CallTree::finalize() {
  for (Node &n : nodeList)
    n.totalNs = n.selfNs;
  // Children always have larger indices than their parents.
  for (size_t i = nodeList.size(); i-- > 1;)
    nodeList[nodeList[i].parent].totalNs += nodeList[i].totalNs;
  numberInstances();
}

void CallTree::numberInstances() {
  std::vector<uint32_t> ops;
  for (Node &parent : nodeList) {
    ops.clear();
    for (uint32_t c : parent.children) {
      nodeList[c].instance = 0;
      if (nodeList[c].node.empty() && nodeList[c].opId != kNoOp)
        ops.push_back(c);
    }
    if (ops.size() < 2)
      continue;
    auto sameSource = [&](uint32_t a, uint32_t b) {
      const Node &x = nodeList[a], &y = nodeList[b];
      return x.name == y.name && x.file == y.file && x.line == y.line;
    };
    std::sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
      const Node &x = nodeList[a], &y = nodeList[b];
      return std::tie(x.name, x.file, x.line, x.opId) <
             std::tie(y.name, y.file, y.line, y.opId);
    });
    for (size_t begin = 0, end; begin < ops.size(); begin = end) {
      for (end = begin + 1;
           end < ops.size() && sameSource(ops[begin], ops[end]);)
        ++end;
      if (end - begin > 1)
        for (size_t i = begin; i < end; ++i)
          nodeList[ops[i]].instance = uint32_t(i - begin + 1);
    }
  }
}

CallTree CallTree::build(const Trace &input, const Selection &selection) {
  Trace sortedCopy;
  const Trace *trace = &input;
  if (!sortedForNesting(input)) {
    sortedCopy = input;
    sortedCopy.sortEvents();
    trace = &sortedCopy;
  }
  const auto &events = trace->events;
  detail::Nesting nesting = detail::nestEvents(*trace);

  CallTree tree;
  StringTable files; // see locOf below
  std::unordered_map<FrameKey, uint32_t, FrameKeyHash> index;
  auto childOf = [&](uint32_t parent, StringId name, StringId file,
                     uint32_t line, StringId nodeName = 0,
                     int64_t opId = kNoOp) {
    FrameKey key{parent, name, file, line, nodeName, nodeName ? kNoOp : opId};
    auto found = index.find(key);
    if (found != index.end())
      return found->second;
    uint32_t id = static_cast<uint32_t>(tree.nodeList.size());
    Node node;
    node.name = std::string(trace->str(name));
    node.file = std::string(files.get(file));
    node.line = line;
    node.node = std::string(trace->str(nodeName));
    node.opId = opId;
    node.parent = parent;
    node.depth = tree.nodeList[parent].depth + 1;
    tree.nodeList.push_back(std::move(node));
    tree.nodeList[parent].children.push_back(id);
    index.emplace(key, id);
    return id;
  };

  // Files live in a local table: locs are parsed into file and line once
  // per distinct loc string, and frames' files are mapped into it.
  std::unordered_map<StringId, std::pair<StringId, uint32_t>> locs;
  std::unordered_map<StringId, StringId> frameFiles;
  auto locOf = [&](StringId loc) {
    auto found = locs.find(loc);
    if (found != locs.end())
      return found->second;
    detail::SplitLoc parts = detail::splitLoc(trace->str(loc));
    auto result = std::make_pair(files.intern(parts.file), parts.line);
    locs.emplace(loc, result);
    return result;
  };
  auto fileOf = [&](StringId file) {
    auto found = frameFiles.find(file);
    if (found != frameFiles.end())
      return found->second;
    StringId local = files.intern(trace->str(file));
    frameFiles.emplace(file, local);
    return local;
  };

  NodeArgs nodeArgs(*trace);
  std::vector<uint32_t> nodeOf(events.size(), UINT32_MAX);
  std::vector<int64_t> childTime(events.size(), 0);
  std::vector<int64_t> clippedDur(events.size(), -1);
  for (uint32_t i = 0; i < events.size(); ++i) {
    const Event &e = events[i];
    if (!selection.includes(e.kind))
      continue;
    int64_t begin = std::max(e.startNs, selection.beginNs);
    int64_t end = std::min(nesting.clippedEndNs[i], selection.endNs);
    if (end < begin || (end == begin && e.durationNs > 0) ||
        e.startNs >= selection.endNs)
      continue;
    uint32_t parentEvent = nesting.parent[i];
    while (parentEvent != UINT32_MAX && nodeOf[parentEvent] == UINT32_MAX)
      parentEvent = nesting.parent[parentEvent];
    uint32_t parentNode = 0;
    if (parentEvent != UINT32_MAX) {
      parentNode = nodeOf[parentEvent];
      childTime[parentEvent] += end - begin;
    } else if (e.stack != kNoStack) {
      for (FrameId f : trace->stackFrames(e.stack)) {
        const Frame &frame = trace->frames[f];
        parentNode =
            childOf(parentNode, frame.name, fileOf(frame.file), frame.line);
      }
    }
    StringId file = 0;
    uint32_t line = 0;
    if (e.loc)
      std::tie(file, line) = locOf(e.loc);
    nodeOf[i] = childOf(parentNode, e.name, file, line, nodeArgs.of(e), e.opId);
    clippedDur[i] = end - begin;
  }
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (nodeOf[i] == UINT32_MAX)
      continue;
    Node &node = tree.nodeList[nodeOf[i]];
    node.selfNs += std::max<int64_t>(0, clippedDur[i] - childTime[i]);
    node.count += 1;
  }
  tree.finalize();
  return tree;
}

std::vector<uint32_t> CallTree::path(uint32_t node) const {
  std::vector<uint32_t> out;
  for (; node != 0; node = nodeList[node].parent)
    out.push_back(node);
  std::reverse(out.begin(), out.end());
  return out;
}

std::string CallTree::module(uint32_t node) const {
  const Node &n = nodeList[node];
  if (!n.file.empty()) {
    std::string_view file = n.file;
    size_t slash = file.find_last_of("/\\");
    if (slash != std::string_view::npos)
      file = file.substr(slash + 1);
    size_t dot = file.rfind('.');
    return std::string(dot == std::string_view::npos ? file
                                                     : file.substr(0, dot));
  }
  size_t cut = n.name.find_first_of(".:( ");
  if (cut == std::string::npos || cut == 0)
    return {};
  return n.name.substr(0, cut);
}

CallTree::SearchResult CallTree::search(std::string_view text) const {
  SearchResult result;
  if (text.empty())
    return result;
  std::string needle = lower(text);
  std::vector<bool> matched(nodeList.size(), false);
  for (uint32_t i = 1; i < nodeList.size(); ++i) {
    const Node &n = nodeList[i];
    matched[i] =
        lower(frameTitle(n.name, n.node)).find(needle) != std::string::npos;
    if (!matched[i])
      continue;
    result.matches.push_back(i);
    bool nested = false;
    for (uint32_t p = nodeList[i].parent; p != 0 && !nested;
         p = nodeList[p].parent)
      nested = matched[p];
    if (!nested)
      result.coveredNs += nodeList[i].totalNs;
  }
  return result;
}

CallTree CallTree::subtree(uint32_t node) const {
  CallTree tree;
  // Explicit stack, not recursion: stacks may be 100,000 frames deep.
  std::vector<std::pair<uint32_t, uint32_t>> stack; // (from, its new parent)
  if (node == 0) {
    for (auto c = nodeList[0].children.rbegin();
         c != nodeList[0].children.rend(); ++c)
      stack.push_back({*c, 0});
  } else {
    stack.push_back({node, 0});
  }
  while (!stack.empty()) {
    auto [from, toParent] = stack.back();
    stack.pop_back();
    const Node &n = nodeList[from];
    uint32_t to = tree.addChild(toParent, n);
    tree.nodeList[to].selfNs = n.selfNs;
    tree.nodeList[to].count = n.count;
    for (auto c = n.children.rbegin(); c != n.children.rend(); ++c)
      stack.push_back({*c, to});
  }
  tree.finalize();
  return tree;
}

std::string CallTree::print(uint32_t maxDepth) const {
  std::string out;
  std::vector<uint32_t> stack{0};
  while (!stack.empty()) {
    uint32_t id = stack.back();
    stack.pop_back();
    const Node &n = nodeList[id];
    if (id != 0) {
      appendIndent(out, n.depth);
      out += label(id) + " total=" + std::to_string(n.totalNs) +
             " self=" + std::to_string(n.selfNs) + "\n";
    }
    if (n.depth >= maxDepth)
      continue;
    std::vector<uint32_t> order = n.children;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      if (nodeList[a].totalNs != nodeList[b].totalNs)
        return nodeList[a].totalNs > nodeList[b].totalNs;
      return label(a) < label(b);
    });
    stack.insert(stack.end(), order.rbegin(), order.rend());
  }
  return out;
}

std::string CallTree::folded() const {
  // One growing prefix for the path being walked, instead of a prefix string
  // per node: a deep stack would otherwise take quadratic memory.
  std::vector<std::string> lines;
  std::string prefix;
  std::vector<std::pair<uint32_t, size_t>> stack; // (node, parent's length)
  for (auto c = nodeList[0].children.rbegin(); c != nodeList[0].children.rend();
       ++c)
    stack.push_back({*c, 0});
  while (!stack.empty()) {
    auto [id, parentLength] = stack.back();
    stack.pop_back();
    const Node &n = nodeList[id];
    prefix.resize(parentLength);
    if (parentLength)
      prefix += ';';
    prefix += label(id);
    if (n.selfNs > 0)
      lines.push_back(prefix + " " + std::to_string(n.selfNs));
    for (auto c = n.children.rbegin(); c != n.children.rend(); ++c)
      stack.push_back({*c, prefix.size()});
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string &line : lines)
    out += line + "\n";
  return out;
}

//===----------------------------------------------------------------------===//
// DiffTree
//===----------------------------------------------------------------------===//

namespace {
/// Builds a DiffTree from two call trees, one after the other.
class DiffMerger {
public:
  explicit DiffMerger(std::vector<DiffNode> &diff) : diff(diff) {}

  /// Adds `tree`'s weights into the diff. A frame goes to the frame with its
  /// label under the matching parent; failing that, to one that differs only
  /// in instance (a run with one op fewer on a line still matches the rest
  /// in order); failing that, to a new frame.
  void merge(const CallTree &tree, bool isBase) {
    taken.assign(diff.size(), false);
    std::vector<std::pair<uint32_t, uint32_t>> stack{{0, 0}}; // (from, to)
    std::vector<uint32_t> unmatched;
    while (!stack.empty()) {
      auto [from, to] = stack.back();
      stack.pop_back();
      const CallTree::Node &n = tree.nodes()[from];
      DiffNode &d = diff[to];
      (isBase ? d.baselineTotalNs : d.currentTotalNs) += n.totalNs;
      (isBase ? d.baselineSelfNs : d.currentSelfNs) += n.selfNs;
      unmatched.clear();
      for (uint32_t c : n.children) {
        auto found = byLabel.find(key(to, tree.label(c)));
        if (found != byLabel.end() && !taken[found->second]) {
          taken[found->second] = true;
          stack.push_back({c, found->second});
        } else {
          unmatched.push_back(c);
        }
      }
      for (uint32_t c : unmatched)
        stack.push_back({c, matchOrAdd(tree.nodes()[c], to)});
    }
  }

private:
  static std::string key(uint32_t parent, const std::string &label) {
    return std::to_string(parent) + "\n" + label;
  }
  /// The key of `frame`'s label without its instance.
  static std::string sourceKey(uint32_t parent, const FlameFrame &frame) {
    return key(parent,
               frameLabel(frame.name, frame.node, 0, frame.file, frame.line));
  }

  uint32_t matchOrAdd(const CallTree::Node &frame, uint32_t parent) {
    std::vector<uint32_t> &same = bySource[sourceKey(parent, frame)];
    for (uint32_t candidate : same)
      if (!taken[candidate]) {
        taken[candidate] = true;
        return candidate;
      }
    DiffNode node;
    static_cast<FlameFrame &>(node) = frame;
    node.parent = parent;
    auto id = uint32_t(diff.size());
    byLabel.emplace(key(parent, node.label()), id);
    same.push_back(id);
    diff.push_back(std::move(node));
    diff[parent].children.push_back(id);
    taken.push_back(true);
    return id;
  }

  std::vector<DiffNode> &diff;
  std::vector<bool> taken; ///< diff frames the tree being merged has used
  std::unordered_map<std::string, uint32_t> byLabel;
  std::unordered_map<std::string, std::vector<uint32_t>> bySource;
};
} // namespace

DiffTree DiffTree::build(const CallTree &baseline, const CallTree &current) {
  DiffTree diff;
  diff.nodeList.emplace_back();
  diff.nodeList[0].name = "<root>";
  DiffMerger merger(diff.nodeList);
  merger.merge(baseline, true);
  merger.merge(current, false);
  return diff;
}

std::string DiffTree::print() const {
  std::string out;
  std::vector<std::pair<uint32_t, uint32_t>> stack{{0, 0}}; // (node, depth)
  while (!stack.empty()) {
    auto [id, depth] = stack.back();
    stack.pop_back();
    const DiffNode &n = nodeList[id];
    if (id != 0) {
      int64_t delta = n.deltaTotalNs();
      appendIndent(out, depth);
      out += n.label() + " " + std::to_string(n.baselineTotalNs) + " -> " +
             std::to_string(n.currentTotalNs) + " (" + (delta > 0 ? "+" : "") +
             std::to_string(delta) +
             (delta > 0   ? ", slower"
              : delta < 0 ? ", faster"
                          : "") +
             ")\n";
    }
    std::vector<uint32_t> order = n.children;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      int64_t da = std::llabs(nodeList[a].deltaTotalNs());
      int64_t db = std::llabs(nodeList[b].deltaTotalNs());
      if (da != db)
        return da > db;
      return nodeList[a].label() < nodeList[b].label();
    });
    for (auto c = order.rbegin(); c != order.rend(); ++c)
      stack.push_back({*c, depth + 1});
  }
  return out;
}

} // namespace cuvil::profiler
