//===- FlameGraph.cpp - Flame trees, their layout, colours and search -----===//

#include "FlameGraph.h"

#include "ProfileData.h"

#include <algorithm>
#include <cmath>

namespace cuvil::workbench {
namespace {

QString fromStd(const std::string &text) {
  return QString::fromUtf8(text.data(), int(text.size()));
}

uint32_t fnv1a(const QString &text) {
  uint32_t hash = 2166136261u;
  for (QChar c : text) {
    hash ^= c.unicode();
    hash *= 16777619u;
  }
  return hash;
}

QColor mix(const QColor &a, const QColor &b, double t) {
  auto channel = [t](int x, int y) {
    return int(std::lround(x + (y - x) * t));
  };
  return QColor(channel(a.red(), b.red()), channel(a.green(), b.green()),
                channel(a.blue(), b.blue()));
}

} // namespace

QString frameModule(const QString &name, const QString &file) {
  if (!file.isEmpty()) {
    int slash = std::max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
    QString base = file.mid(slash + 1);
    int dot = base.lastIndexOf('.');
    return dot < 0 ? base : base.left(dot);
  }
  int cut = -1;
  for (int i = 0; i < name.size(); ++i) {
    QChar c = name[i];
    if (c == '.' || c == ':' || c == '(' || c == ' ') {
      cut = i;
      break;
    }
  }
  return cut <= 0 ? QString() : name.left(cut);
}

FlameTree::FlameTree() {
  nodeList.emplace_back();
  nodeList[0].name = "all";
}

FlameTree FlameTree::fromCallTree(const prof::CallTree &tree) {
  FlameTree out;
  out.nodeList.clear();
  out.nodeList.reserve(tree.nodes().size());
  for (const prof::CallTree::Node &n : tree.nodes()) {
    Node node;
    node.name = displayText(prof::frameTitle(n.name, n.node, n.instance));
    node.eventName = displayText(n.name);
    node.node = displayText(n.node);
    node.opId = n.opId;
    node.file = fromStd(n.file);
    node.line = n.line;
    node.module = frameModule(node.name, node.file);
    node.parent = n.parent;
    node.depth = n.depth;
    node.children = n.children;
    node.totalNs = n.totalNs;
    node.selfNs = n.selfNs;
    node.count = n.count;
    out.deepest = std::max(out.deepest, n.depth);
    out.nodeList.push_back(std::move(node));
  }
  out.nodeList[0].name = "all";
  out.nodeList[0].module.clear();
  out.sortChildren();
  return out;
}

prof::CallTree withoutLines(const prof::CallTree &tree) {
  prof::CallTree out;
  const auto &nodes = tree.nodes();
  std::vector<prof::CallTree::Node> frames;
  std::vector<const prof::CallTree::Node *> path;
  for (uint32_t i = 1; i < nodes.size(); ++i) {
    if (nodes[i].selfNs <= 0)
      continue;
    frames.clear();
    for (uint32_t id : tree.path(i)) {
      prof::CallTree::Node frame;
      frame.name = nodes[id].name;
      frame.file = nodes[id].file;
      frame.node = nodes[id].node;
      frame.opId = nodes[id].opId;
      frames.push_back(std::move(frame));
    }
    path.clear();
    for (const prof::CallTree::Node &frame : frames)
      path.push_back(&frame);
    out.addPath(path, nodes[i].selfNs);
  }
  out.finalize();
  return out;
}

FlameTree FlameTree::fromDiff(const prof::CallTree &baseline,
                              const prof::CallTree &current, DiffWidth width,
                              bool matchLines) {
  prof::DiffTree diffTree = matchLines
                                ? prof::DiffTree::build(baseline, current)
                                : prof::DiffTree::build(withoutLines(baseline),
                                                        withoutLines(current));
  FlameTree out;
  out.diff = true;
  out.diffWidth = width;
  out.nodeList.clear();
  out.nodeList.reserve(diffTree.nodes().size());
  for (const prof::DiffNode &n : diffTree.nodes()) {
    Node node;
    node.name = displayText(prof::frameTitle(n.name, n.node, n.instance));
    node.eventName = displayText(n.name);
    node.node = displayText(n.node);
    node.file = fromStd(n.file);
    node.line = n.line;
    node.module = frameModule(node.name, node.file);
    node.parent = n.parent;
    node.children = n.children;
    node.totalNs = n.currentTotalNs;
    node.selfNs = n.currentSelfNs;
    node.baselineTotalNs = n.baselineTotalNs;
    node.baselineSelfNs = n.baselineSelfNs;
    out.nodeList.push_back(std::move(node));
  }
  // Children come after their parents, so one pass sets every depth.
  for (size_t i = 1; i < out.nodeList.size(); ++i) {
    Node &n = out.nodeList[i];
    n.depth = out.nodeList[n.parent].depth + 1;
    out.deepest = std::max(out.deepest, n.depth);
  }
  out.nodeList[0].name = "all";
  out.nodeList[0].module.clear();
  out.sortChildren();
  return out;
}

void FlameTree::sortChildren() {
  for (Node &n : nodeList)
    std::sort(n.children.begin(), n.children.end(),
              [&](uint32_t a, uint32_t b) {
                int64_t wa = weight(a), wb = weight(b);
                if (wa != wb)
                  return wa > wb;
                return nodeList[a].name < nodeList[b].name;
              });
}

int64_t FlameTree::weight(uint32_t id) const {
  const Node &n = nodeList[id];
  return diff && diffWidth == DiffWidth::Baseline ? n.baselineTotalNs
                                                  : n.totalNs;
}

QString FlameTree::location(uint32_t id) const {
  const Node &n = nodeList[id];
  if (n.file.isEmpty())
    return {};
  return n.line ? QString("%1:%2").arg(n.file).arg(n.line) : n.file;
}

std::vector<uint32_t> FlameTree::path(uint32_t id) const {
  std::vector<uint32_t> out;
  for (; id != 0; id = nodeList[id].parent)
    out.push_back(id);
  std::reverse(out.begin(), out.end());
  return out;
}

bool FlameTree::isAncestorOrSelf(uint32_t ancestor, uint32_t id) const {
  for (;; id = nodeList[id].parent) {
    if (id == ancestor)
      return true;
    if (id == 0)
      return false;
  }
}

FlameTree::SearchResult FlameTree::search(const QString &text) const {
  SearchResult result;
  result.isMatch.assign(nodeList.size(), false);
  if (text.isEmpty())
    return result;
  for (uint32_t i = 1; i < nodeList.size(); ++i) {
    const Node &n = nodeList[i];
    if (!n.name.contains(text, Qt::CaseInsensitive))
      continue;
    result.isMatch[i] = true;
    result.matches.push_back(i);
    bool nested = false;
    for (uint32_t p = n.parent; p != 0 && !nested; p = nodeList[p].parent)
      nested = result.isMatch[p];
    if (!nested)
      result.coveredNs += weight(i);
  }
  return result;
}

QString FlameTree::print() const {
  QString out;
  std::vector<uint32_t> stack(nodeList[0].children.rbegin(),
                              nodeList[0].children.rend());
  while (!stack.empty()) {
    uint32_t id = stack.back();
    stack.pop_back();
    const Node &n = nodeList[id];
    out += QString(2 * (n.depth - 1), ' ') + n.name;
    if (!n.file.isEmpty())
      out += " (" + location(id) + ")";
    if (diff)
      out += QString(" %1 -> %2 (%3)")
                 .arg(formatDuration(n.baselineTotalNs),
                      formatDuration(n.totalNs), formatDelta(n.deltaTotalNs()));
    else
      out += QString(" total=%1 self=%2 count=%3")
                 .arg(formatDuration(n.totalNs), formatDuration(n.selfNs))
                 .arg(n.count);
    out += '\n';
    stack.insert(stack.end(), n.children.rbegin(), n.children.rend());
  }
  return out;
}

std::vector<FlameRect> layoutFlame(const FlameTree &tree, uint32_t zoom,
                                   double minFraction) {
  std::vector<FlameRect> rects;
  if (zoom >= tree.size())
    zoom = 0;
  rects.push_back({0, 0, 0.0, 1.0, zoom != 0});
  for (uint32_t id : tree.path(zoom))
    rects.push_back({id, tree.node(id).depth, 0.0, 1.0, id != zoom});
  int64_t zoomWeight = tree.weight(zoom);
  if (zoomWeight <= 0)
    return rects;
  double scale = 1.0 / double(zoomWeight);
  struct Item {
    uint32_t node;
    double x0;
  };
  std::vector<Item> stack{{zoom, 0.0}};
  while (!stack.empty()) {
    Item item = stack.back();
    stack.pop_back();
    double x = item.x0;
    for (uint32_t c : tree.node(item.node).children) {
      double width = double(tree.weight(c)) * scale;
      if (width < minFraction || width <= 0)
        continue; // heaviest first, but keep going: equal weights tie
      rects.push_back({c, tree.node(c).depth, x, x + width, false});
      stack.push_back({c, x});
      x += width;
    }
  }
  return rects;
}

const FlameRect *flameRectAt(const std::vector<FlameRect> &rects, double x,
                             uint32_t row) {
  for (const FlameRect &r : rects)
    if (r.row == row && x >= r.x0 && x < r.x1)
      return &r;
  return nullptr;
}

QColor moduleColor(const QString &module, const QString &name) {
  // Light tones of distinct hues; dark text stays readable on all of them.
  static const QColor palette[] = {
      {255, 179, 102}, {138, 198, 232}, {166, 216, 138}, {246, 154, 154},
      {196, 170, 230}, {255, 214, 120}, {128, 212, 196}, {240, 168, 206},
      {200, 200, 120}, {170, 190, 255}, {230, 190, 150}, {150, 220, 230}};
  if (module.isEmpty())
    return QColor(222, 214, 196).darker(100 + int(fnv1a(name) % 9));
  QColor base = palette[fnv1a(module) % (sizeof(palette) / sizeof(*palette))];
  return base.darker(100 + int(fnv1a(name) % 19));
}

QColor diffColor(int64_t baselineNs, int64_t currentNs) {
  static const QColor neutral(236, 234, 230), slower(215, 48, 39),
      faster(49, 104, 196);
  if (baselineNs == currentNs)
    return neutral;
  if (baselineNs <= 0)
    return slower;
  if (currentNs <= 0)
    return faster;
  double relative =
      double(currentNs - baselineNs) / double(std::max(baselineNs, currentNs));
  double t = std::min(1.0, std::abs(relative) / 0.4);
  // Small changes still show a tint: a 1% change is visible but faint.
  t = 0.12 + 0.88 * t;
  return mix(neutral, relative > 0 ? slower : faster, t);
}

QColor textColorOn(const QColor &background) {
  double luminance = 0.299 * background.red() + 0.587 * background.green() +
                     0.114 * background.blue();
  return luminance > 140 ? QColor(20, 20, 20) : QColor(250, 250, 250);
}

} // namespace cuvil::workbench
