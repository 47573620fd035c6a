//===- CallTree.cpp - Flame/icicle trees, their diff, search and zoom -----===//

#include "FormatSupport.h"
#include "cuvil/Profiler/Analysis.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <unordered_map>

namespace cuvil::profiler {
namespace {

struct KeyHash {
  size_t operator()(const std::pair<uint64_t, uint64_t> &k) const {
    return std::hash<uint64_t>()(k.first * 0x9E3779B97F4A7C15ULL + k.second);
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

std::string nodeText(const std::string &name, const std::string &file,
                     uint32_t line) {
  if (file.empty())
    return name;
  return name + " (" + file + (line ? ":" + std::to_string(line) : "") + ")";
}

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

CallTree::CallTree() {
  nodeList.emplace_back();
  nodeList[0].name = "<root>";
}

uint32_t CallTree::child(uint32_t parent, std::string_view name,
                         std::string_view file, uint32_t line) const {
  for (uint32_t c : nodeList[parent].children) {
    const Node &n = nodeList[c];
    if (n.name == name && n.file == file && n.line == line)
      return c;
  }
  return 0;
}

uint32_t CallTree::addChild(uint32_t parent, std::string_view name,
                            std::string_view file, uint32_t line) {
  if (uint32_t existing = child(parent, name, file, line))
    return existing;
  Node node;
  node.name = std::string(name);
  node.file = std::string(file);
  node.line = line;
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
    at = addChild(at, frame->name, frame->file, frame->line);
  nodeList[at].selfNs += weightNs;
  nodeList[at].count += 1;
}

void CallTree::finalize() {
  for (Node &n : nodeList)
    n.totalNs = n.selfNs;
  // Children always have larger indices than their parents.
  for (size_t i = nodeList.size(); i-- > 1;)
    nodeList[nodeList[i].parent].totalNs += nodeList[i].totalNs;
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
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, KeyHash> index;
  auto childOf = [&](uint32_t parent, StringId name, StringId file,
                     uint32_t line) {
    auto key = std::make_pair((uint64_t(parent) << 32) | name,
                              (uint64_t(file) << 32) | line);
    auto found = index.find(key);
    if (found != index.end())
      return found->second;
    uint32_t id = static_cast<uint32_t>(tree.nodeList.size());
    Node node;
    node.name = std::string(trace->str(name));
    node.file = std::string(files.get(file));
    node.line = line;
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
    nodeOf[i] = childOf(parentNode, e.name, file, line);
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
    matched[i] = lower(nodeList[i].name).find(needle) != std::string::npos;
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
    uint32_t to = tree.addChild(toParent, n.name, n.file, n.line);
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
      out += nodeText(n.name, n.file, n.line) +
             " total=" + std::to_string(n.totalNs) +
             " self=" + std::to_string(n.selfNs) + "\n";
    }
    if (n.depth >= maxDepth)
      continue;
    std::vector<uint32_t> order = n.children;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      if (nodeList[a].totalNs != nodeList[b].totalNs)
        return nodeList[a].totalNs > nodeList[b].totalNs;
      return nodeList[a].name < nodeList[b].name;
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
    prefix += nodeText(n.name, n.file, n.line);
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
/// Adds `tree`'s weights into `diff`, matching frames by name and location.
void mergeInto(std::vector<DiffNode> &diff, const CallTree &tree, bool isBase) {
  std::vector<std::pair<uint32_t, uint32_t>> stack{{0, 0}}; // (from, to)
  while (!stack.empty()) {
    auto [from, to] = stack.back();
    stack.pop_back();
    const CallTree::Node &n = tree.nodes()[from];
    DiffNode &d = diff[to];
    (isBase ? d.baselineTotalNs : d.currentTotalNs) += n.totalNs;
    (isBase ? d.baselineSelfNs : d.currentSelfNs) += n.selfNs;
    for (uint32_t c : n.children) {
      const CallTree::Node &cn = tree.nodes()[c];
      uint32_t target = 0;
      for (uint32_t existing : diff[to].children) {
        const DiffNode &e = diff[existing];
        if (e.name == cn.name && e.file == cn.file && e.line == cn.line)
          target = existing;
      }
      if (!target) {
        DiffNode node;
        node.name = cn.name;
        node.file = cn.file;
        node.line = cn.line;
        node.parent = to;
        target = static_cast<uint32_t>(diff.size());
        diff.push_back(std::move(node));
        diff[to].children.push_back(target);
      }
      stack.push_back({c, target});
    }
  }
}
} // namespace

DiffTree DiffTree::build(const CallTree &baseline, const CallTree &current) {
  DiffTree diff;
  diff.nodeList.emplace_back();
  diff.nodeList[0].name = "<root>";
  mergeInto(diff.nodeList, baseline, true);
  mergeInto(diff.nodeList, current, false);
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
      out += nodeText(n.name, n.file, n.line) + " " +
             std::to_string(n.baselineTotalNs) + " -> " +
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
      return nodeList[a].name < nodeList[b].name;
    });
    for (auto c = order.rbegin(); c != order.rend(); ++c)
      stack.push_back({*c, depth + 1});
  }
  return out;
}

} // namespace cuvil::profiler
