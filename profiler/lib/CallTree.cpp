//===- CallTree.cpp - Flame/icicle trees, their diff, search and zoom -----===//

#include "FormatSupport.h"
#include "cuvil/Profiler/Analysis.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <unordered_map>

namespace cuvil::profiler {
namespace {

struct KeyHash {
  size_t operator()(const std::pair<uint64_t, uint64_t> &k) const {
    return std::hash<uint64_t>()(k.first * 0x9E3779B97F4A7C15ULL + k.second);
  }
};

/// Splits "file:line:col" (or "file:line") into file and line.
void splitLoc(std::string_view loc, std::string_view &file, uint32_t &line) {
  auto numericTail = [](std::string_view text, size_t &colon) {
    colon = text.rfind(':');
    if (colon == std::string_view::npos || colon + 1 == text.size())
      return false;
    return std::all_of(text.begin() + colon + 1, text.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
  };
  file = loc;
  line = 0;
  size_t colon;
  if (!numericTail(file, colon))
    return;
  std::string_view last = file.substr(colon + 1);
  file = file.substr(0, colon);
  if (numericTail(file, colon)) { // "file:line:col"
    last = file.substr(colon + 1);
    file = file.substr(0, colon);
  }
  line = static_cast<uint32_t>(
      std::strtoul(std::string(last).c_str(), nullptr, 10));
}

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
    std::string_view file;
    uint32_t line = 0;
    splitLoc(trace->str(loc), file, line);
    auto result = std::make_pair(files.intern(file), line);
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
  std::function<void(uint32_t, uint32_t)> copy = [&](uint32_t from,
                                                     uint32_t toParent) {
    const Node &n = nodeList[from];
    uint32_t to = tree.addChild(toParent, n.name, n.file, n.line);
    tree.nodeList[to].selfNs = n.selfNs;
    tree.nodeList[to].count = n.count;
    for (uint32_t c : n.children)
      copy(c, to);
  };
  if (node == 0) {
    for (uint32_t c : nodeList[0].children)
      copy(c, 0);
  } else {
    copy(node, 0);
  }
  tree.finalize();
  return tree;
}

std::string CallTree::print(uint32_t maxDepth) const {
  std::string out;
  std::function<void(uint32_t)> visit = [&](uint32_t id) {
    const Node &n = nodeList[id];
    if (id != 0) {
      out.append(2 * (n.depth - 1), ' ');
      out += nodeText(n.name, n.file, n.line) +
             " total=" + std::to_string(n.totalNs) +
             " self=" + std::to_string(n.selfNs) + "\n";
    }
    if (n.depth >= maxDepth)
      return;
    std::vector<uint32_t> order = n.children;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      if (nodeList[a].totalNs != nodeList[b].totalNs)
        return nodeList[a].totalNs > nodeList[b].totalNs;
      return nodeList[a].name < nodeList[b].name;
    });
    for (uint32_t c : order)
      visit(c);
  };
  visit(0);
  return out;
}

std::string CallTree::folded() const {
  std::vector<std::string> lines;
  std::vector<std::string> prefix(nodeList.size());
  for (uint32_t i = 1; i < nodeList.size(); ++i) {
    const Node &n = nodeList[i];
    std::string text = nodeText(n.name, n.file, n.line);
    prefix[i] = n.parent == 0 ? text : prefix[n.parent] + ";" + text;
    if (n.selfNs > 0)
      lines.push_back(prefix[i] + " " + std::to_string(n.selfNs));
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

DiffTree DiffTree::build(const CallTree &baseline, const CallTree &current) {
  DiffTree diff;
  diff.nodeList.emplace_back();
  diff.nodeList[0].name = "<root>";
  std::function<void(const CallTree &, uint32_t, uint32_t, bool)> merge =
      [&](const CallTree &tree, uint32_t from, uint32_t to, bool isBase) {
        const CallTree::Node &n = tree.nodes()[from];
        DiffNode &d = diff.nodeList[to];
        (isBase ? d.baselineTotalNs : d.currentTotalNs) += n.totalNs;
        (isBase ? d.baselineSelfNs : d.currentSelfNs) += n.selfNs;
        for (uint32_t c : n.children) {
          const CallTree::Node &cn = tree.nodes()[c];
          uint32_t target = 0;
          for (uint32_t existing : diff.nodeList[to].children) {
            const DiffNode &e = diff.nodeList[existing];
            if (e.name == cn.name && e.file == cn.file && e.line == cn.line)
              target = existing;
          }
          if (!target) {
            DiffNode node;
            node.name = cn.name;
            node.file = cn.file;
            node.line = cn.line;
            node.parent = to;
            target = static_cast<uint32_t>(diff.nodeList.size());
            diff.nodeList.push_back(std::move(node));
            diff.nodeList[to].children.push_back(target);
          }
          merge(tree, c, target, isBase);
        }
      };
  merge(baseline, 0, 0, true);
  merge(current, 0, 0, false);
  return diff;
}

std::string DiffTree::print() const {
  std::string out;
  std::function<void(uint32_t, int)> visit = [&](uint32_t id, int depth) {
    const DiffNode &n = nodeList[id];
    if (id != 0) {
      int64_t delta = n.deltaTotalNs();
      out.append(2 * (depth - 1), ' ');
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
    for (uint32_t c : order)
      visit(c, depth + 1);
  };
  visit(0, 0);
  return out;
}

} // namespace cuvil::profiler
