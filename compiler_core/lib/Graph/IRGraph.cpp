//===- IRGraph.cpp - Recover the dataflow graph of printed IR -------------===//
//
// MLIR prints one op per line; an op whose line ends in '{' owns regions that
// close with a line starting with '}'. The printer numbers SSA values per
// region (sibling regions reuse names), so names are resolved through a
// stack of region scopes. Values used before the line that defines them (a
// block printed after its use) are resolved when their region closes.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Graph/IRGraph.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

namespace cuvil::graph {
namespace {

bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.' || c == '-';
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool allDigits(const std::string &s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
  return true;
}

/// Parses "file:line:col" (pretty form) or "\"file\":line:col".
bool parseFileLoc(std::string text, SourceLoc &loc) {
  size_t c2 = text.rfind(':');
  if (c2 == std::string::npos || c2 == 0)
    return false;
  size_t c1 = text.rfind(':', c2 - 1);
  if (c1 == std::string::npos || c1 == 0)
    return false;
  std::string line = text.substr(c1 + 1, c2 - c1 - 1);
  std::string col = text.substr(c2 + 1);
  if (!allDigits(line) || !allDigits(col))
    return false;
  std::string file = text.substr(0, c1);
  if (file.size() >= 2 && file.front() == '"' && file.back() == '"')
    file = file.substr(1, file.size() - 2);
  if (file.empty() || file[0] == '%' || file[0] == '#')
    return false;
  loc.file = file;
  loc.line = std::stoi(line);
  loc.column = std::stoi(col);
  return true;
}

/// Location aliases ("#loc3 = loc(...)" or pretty "#loc3 = file:l:c").
using LocAliases = std::unordered_map<std::string, SourceLoc>;

/// First file location inside a location's text (fused locations list
/// several; the first is the op's own).
bool firstFileLoc(const std::string &text, const LocAliases &aliases,
                  SourceLoc &loc) {
  size_t q = text.find('"');
  if (q != std::string::npos) {
    size_t q2 = text.find('"', q + 1);
    if (q2 != std::string::npos) {
      size_t end = q2 + 1;
      while (end < text.size() && (std::isdigit((unsigned char)text[end]) ||
                                   text[end] == ':'))
        ++end;
      if (parseFileLoc(text.substr(q, end - q), loc))
        return true;
    }
  }
  size_t hash = text.find("#loc");
  if (hash != std::string::npos) {
    size_t end = hash + 1;
    while (end < text.size() && isIdentChar(text[end]))
      ++end;
    auto it = aliases.find(text.substr(hash, end - hash));
    if (it != aliases.end()) {
      loc = it->second;
      return true;
    }
  }
  // Pretty form: tokens separated by ", " or spaces inside brackets.
  std::string token;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ' ';
    if (c == ' ' || c == ',' || c == '[' || c == ']' || c == '(' || c == ')') {
      if (!token.empty() && parseFileLoc(token, loc))
        return true;
      token.clear();
    } else {
      token += c;
    }
  }
  return false;
}

/// Splits a printed op line into its body and trailing location.
std::string splitLoc(const std::string &line, const LocAliases &aliases,
                     SourceLoc &loc) {
  if (line.empty())
    return line;
  // Parseable form: "... loc(...)".
  if (line.back() == ')') {
    size_t at = line.rfind(" loc(");
    if (at != std::string::npos) {
      int depth = 0;
      size_t i = at + 4;
      for (; i < line.size(); ++i) {
        if (line[i] == '(')
          ++depth;
        else if (line[i] == ')' && --depth == 0)
          break;
      }
      if (i == line.size() - 1) {
        firstFileLoc(line.substr(at + 5, i - at - 5), aliases, loc);
        return trim(line.substr(0, at));
      }
    }
  }
  // Pretty form, bracketed: "[unknown]" or a fused "[a:1:2, b:3:4]".
  if (line.back() == ']') {
    int depth = 0;
    size_t i = line.size();
    while (i-- > 0) {
      if (line[i] == ']')
        ++depth;
      else if (line[i] == '[' && --depth == 0)
        break;
    }
    if (i != std::string::npos && i > 0 && line[i - 1] == ' ') {
      std::string inner = line.substr(i, line.size() - i);
      SourceLoc found;
      if (inner == "[unknown]" || firstFileLoc(inner, aliases, found)) {
        loc = found;
        return trim(line.substr(0, i));
      }
    }
    return line;
  }
  // Pretty form: a last token "file:line:col".
  size_t space = line.rfind(' ');
  if (space == std::string::npos)
    return line;
  SourceLoc found;
  if (parseFileLoc(line.substr(space + 1), found)) {
    loc = found;
    return trim(line.substr(0, space));
  }
  return line;
}

/// One SSA-name token of an op line.
struct NameRef {
  std::string name; ///< "%x" without a "#N" result index
  bool defined;     ///< followed by " = " (a region argument being bound)
  bool block;       ///< a "^bb" successor
};

std::vector<NameRef> scanNames(const std::string &text, size_t from) {
  std::vector<NameRef> refs;
  bool inString = false;
  for (size_t i = from; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"' && (i == 0 || text[i - 1] != '\\'))
      inString = !inString;
    if (inString || (c != '%' && c != '^'))
      continue;
    size_t end = i + 1;
    while (end < text.size() && isIdentChar(text[end]))
      ++end;
    if (end == i + 1)
      continue;
    std::string name = text.substr(i, end - i);
    size_t next = end;
    if (next < text.size() && text[next] == '#') // result index %4#1
      while (++next < text.size() && std::isdigit((unsigned char)text[next]))
        ;
    bool defined = text.compare(next, 3, " = ") == 0;
    refs.push_back({name, defined, c == '^'});
    i = next - 1;
  }
  return refs;
}

/// The op text with SSA names and block names replaced, for comparing ops
/// across snapshots.
std::string normalize(const std::string &body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    out += c;
    if (c == '%' || c == '^') {
      while (i + 1 < body.size() && isIdentChar(body[i + 1]))
        ++i;
    }
  }
  return out;
}

std::string typeSummary(const std::string &body) {
  size_t arrow = body.rfind("-> ");
  size_t colon = body.rfind(" : ");
  std::string type;
  if (arrow != std::string::npos && (colon == std::string::npos || arrow > colon))
    type = body.substr(arrow + 3);
  else if (colon != std::string::npos)
    type = body.substr(colon + 3);
  if (!type.empty() && type.back() == '{')
    type = trim(type.substr(0, type.size() - 1));
  // "llvm.br ^bb1(%0 : i64)": drop the successor list's closing parenthesis.
  int balance = 0;
  for (char c : type)
    balance += c == '(' ? 1 : c == ')' ? -1 : 0;
  while (balance < 0 && !type.empty() && type.back() == ')') {
    type.pop_back();
    ++balance;
  }
  if (type.size() > 48)
    type = type.substr(0, 45) + "...";
  return type;
}

bool isConstantOp(const std::string &opName) {
  return opName == "arith.constant" || opName == "llvm.mlir.constant" ||
         opName == "cuvil.constant" || opName == "index.constant";
}

/// Recognizes "func.func @name(" / "llvm.func internal @name(" headers.
bool functionHeader(const std::string &body, std::string &name) {
  size_t start = 0;
  if (body.compare(0, 10, "func.func ") == 0)
    start = 10;
  else if (body.compare(0, 10, "llvm.func ") == 0)
    start = 10;
  else
    return false;
  size_t at = body.find('@', start);
  if (at == std::string::npos || body.empty() || body.back() != '{')
    return false;
  size_t end = at + 1;
  while (end < body.size() && isIdentChar(body[end]))
    ++end;
  name = body.substr(at + 1, end - at - 1);
  return !name.empty();
}

std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      if (start < text.size())
        lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

LocAliases collectAliases(const std::vector<std::string> &lines) {
  LocAliases aliases;
  for (const std::string &raw : lines) {
    if (raw.compare(0, 4, "#loc") != 0)
      continue;
    size_t eq = raw.find(" = ");
    if (eq == std::string::npos)
      continue;
    SourceLoc loc;
    if (firstFileLoc(raw.substr(eq + 3), aliases, loc))
      aliases[raw.substr(0, eq)] = loc;
  }
  return aliases;
}

/// Builds the graph of the function starting at line `first`.
class GraphBuilder {
public:
  GraphBuilder(const std::vector<std::string> &lines, const LocAliases &aliases,
               const GraphOptions &options, IRGraph &graph)
      : lines(lines), aliases(aliases), options(options), graph(graph) {}

  bool build(size_t first, std::string &error);

private:
  struct Scope {
    std::unordered_map<std::string, int> names; ///< value -> node (-1: hidden)
    std::vector<std::pair<int, std::string>> pending; ///< unresolved uses
    int owner = -1;   ///< node owning the region, -1 for the function body
    int cluster = -1; ///< cluster drawn for the region
    bool collapsed = false; ///< inside a region drawn as one node
  };

  int addNode(std::string opName, OpKind kind, int irLine) {
    Node node;
    node.id = static_cast<int>(graph.nodes.size());
    node.opName = std::move(opName);
    node.kind = kind;
    node.irLine = irLine;
    node.cluster = scopes.back().cluster;
    graph.nodes.push_back(std::move(node));
    return graph.nodes.back().id;
  }

  int lookup(const std::string &name, bool &found) const {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto f = it->names.find(name);
      if (f != it->names.end()) {
        found = true;
        return f->second;
      }
    }
    found = false;
    return -1;
  }

  void addEdge(int from, int to, const std::string &value) {
    if (from < 0 || to < 0 || from == to)
      return;
    if (!edgeSet.insert({from, to}).second)
      return;
    graph.edges.push_back({from, to, value});
  }

  /// A use-def edge. Between the blocks of a collapsed function only the
  /// branches are drawn: values defined early and used everywhere would
  /// otherwise add an edge from the entry block to every block, long edges
  /// that make the layout slow and the picture unreadable.
  void addDataEdge(int from, int to, const std::string &value) {
    if (currentBlock >= 0 && from >= 0 && to >= 0 &&
        graph.nodes[from].kind == OpKind::Block &&
        graph.nodes[to].kind == OpKind::Block)
      return;
    addEdge(from, to, value);
  }

  void use(const std::string &name, int user) {
    bool found = false;
    int def = lookup(name, found);
    if (found)
      addDataEdge(def, user, name);
    else
      scopes.back().pending.push_back({user, name});
  }

  void popScope() {
    Scope scope = std::move(scopes.back());
    scopes.pop_back();
    for (auto &[user, name] : scope.pending) {
      auto f = scope.names.find(name);
      if (f != scope.names.end())
        addDataEdge(f->second, user, name);
      else if (!scopes.empty())
        scopes.back().pending.push_back({user, name});
    }
  }

  /// The node that stands for ops at the current position: the collapsed
  /// region's node inside a collapsed region, the block's node in the body
  /// of a collapsed multi-block function; -1 when ops are drawn one by one.
  int collapseTarget() const {
    if (scopes.back().collapsed)
      return collapsedOwner;
    if (currentBlock >= 0 && scopes.size() == 1)
      return currentBlock;
    return -1;
  }

  /// Whether the function body has several blocks (block labels indented
  /// like the function header, as MLIR prints them).
  bool hasBlocks(size_t first) const;

  void blockLabel(const std::string &body, int irLine);
  void opLine(const std::string &body, const SourceLoc &loc, int irLine);
  void functionArguments(const std::string &header, int irLine);

  const std::vector<std::string> &lines;
  const LocAliases &aliases;
  const GraphOptions &options;
  IRGraph &graph;
  std::vector<Scope> scopes;
  std::set<std::pair<int, int>> edgeSet;
  std::map<std::string, int> blocks;
  std::vector<std::pair<int, std::string>> blockUses;
  int collapsedOwner = -1;
  int currentBlock = -1; ///< collapsed multi-block body: the open block
};

bool GraphBuilder::hasBlocks(size_t first) const {
  size_t indent = lines[first].find_first_not_of(' ');
  for (size_t i = first + 1; i < lines.size(); ++i) {
    size_t at = lines[i].find_first_not_of(' ');
    if (at == std::string::npos)
      continue;
    if (at <= indent && lines[i][at] == '}')
      return false;
    if (at == indent && lines[i][at] == '^')
      return true;
  }
  return false;
}

void GraphBuilder::functionArguments(const std::string &header, int irLine) {
  size_t open = header.find('(');
  if (open == std::string::npos)
    return;
  for (const NameRef &ref : scanNames(header, open)) {
    if (ref.block || ref.defined)
      continue;
    // "%arg0: tensor<4xf32> loc, %arg1: ..." - the type follows the name.
    size_t at = header.find(ref.name + ":", open);
    if (at == std::string::npos)
      continue;
    if (currentBlock >= 0) {
      scopes.back().names[ref.name] = currentBlock;
      continue;
    }
    int node = addNode(ref.name, OpKind::Argument, irLine);
    size_t typeStart = at + ref.name.size() + 1;
    size_t typeEnd = typeStart;
    int depth = 0;
    for (; typeEnd < header.size(); ++typeEnd) {
      char c = header[typeEnd];
      if (c == '<' || c == '(' || c == '[' || c == '{')
        ++depth;
      else if (c == '>' || c == ')' || c == ']' || c == '}') {
        if (depth == 0)
          break;
        --depth;
      } else if (c == ',' && depth == 0)
        break;
    }
    SourceLoc loc;
    std::string type =
        splitLoc(trim(header.substr(typeStart, typeEnd - typeStart)), aliases,
                 loc);
    graph.nodes[node].type = type.size() > 48 ? type.substr(0, 45) + "..." : type;
    graph.nodes[node].loc = loc;
    graph.nodes[node].results = ref.name;
    graph.nodes[node].signature = "arg:" + type;
    scopes.back().names[ref.name] = node;
  }
}

void GraphBuilder::blockLabel(const std::string &body, int irLine) {
  size_t end = 1;
  while (end < body.size() && isIdentChar(body[end]))
    ++end;
  std::string label = body.substr(0, end);
  int owner = scopes.back().owner;
  if (scopes.size() == 1) {
    // A block of the function body itself: drawn as a node that branches
    // lead to (and, collapsed, that stands for the block's ops).
    int node = addNode(label, OpKind::Block, irLine);
    graph.nodes[node].signature = "block";
    blocks[label] = node;
    owner = node;
    if (currentBlock >= 0)
      currentBlock = node;
  } else if (collapseTarget() >= 0) {
    owner = collapseTarget();
  }
  for (const NameRef &ref : scanNames(body, end))
    if (!ref.block)
      scopes.back().names[ref.name] = owner;
}

void GraphBuilder::opLine(const std::string &body, const SourceLoc &loc,
                          int irLine) {
  // Results: "%a, %b:2 = op ..." (names before the first " = ").
  std::vector<std::string> results;
  size_t pos = 0;
  if (body[0] == '%') {
    size_t eq = body.find(" = ");
    if (eq == std::string::npos)
      return;
    for (const NameRef &ref : scanNames(body.substr(0, eq), 0))
      results.push_back(ref.name);
    pos = eq + 3;
  }
  // Op name: a bare identifier or the quoted generic form.
  std::string opName;
  size_t nameEnd = pos;
  if (pos < body.size() && body[pos] == '"') {
    nameEnd = body.find('"', pos + 1);
    if (nameEnd == std::string::npos)
      return;
    opName = body.substr(pos + 1, nameEnd - pos - 1);
    ++nameEnd;
  } else {
    while (nameEnd < body.size() && isIdentChar(body[nameEnd]))
      ++nameEnd;
    opName = body.substr(pos, nameEnd - pos);
  }
  if (opName.empty())
    return;
  bool opensRegion = body.back() == '{';

  int target = collapseTarget();
  int node = target;
  if (target >= 0) {
    ++graph.nodes[target].collapsedOps;
  } else if (options.hideConstants && isConstantOp(opName)) {
    for (const std::string &r : results)
      scopes.back().names[r] = -1;
    return;
  } else {
    node = addNode(opName, classifyOp(opName), irLine);
    Node &n = graph.nodes[node];
    n.loc = loc;
    n.type = typeSummary(body);
    n.signature = normalize(body);
    std::string names;
    for (const std::string &r : results)
      names += (names.empty() ? "" : ", ") + r;
    n.results = names;
  }
  for (const std::string &r : results)
    scopes.back().names[r] = node;

  std::vector<std::string> regionArgs;
  for (const NameRef &ref : scanNames(body, nameEnd)) {
    if (ref.block) {
      blockUses.push_back({node, ref.name});
      continue;
    }
    if (ref.defined && opensRegion) {
      regionArgs.push_back(ref.name);
      continue;
    }
    bool found = false;
    lookup(ref.name, found);
    if (!found && opensRegion)
      regionArgs.push_back(ref.name); // e.g. scf.forall (%i) in (2)
    else
      use(ref.name, node);
  }

  if (!opensRegion)
    return;
  Scope scope;
  scope.owner = node;
  scope.collapsed = scopes.back().collapsed;
  scope.cluster = scopes.back().cluster;
  if (target >= 0 && !scope.collapsed) { // a region inside a collapsed block
    scope.collapsed = true;
    collapsedOwner = target;
  } else if (target < 0 && options.collapseRegions) {
    scope.collapsed = true;
    collapsedOwner = node;
  } else if (target < 0) {
    Cluster cluster;
    cluster.id = static_cast<int>(graph.clusters.size());
    cluster.parent = scopes.back().cluster;
    cluster.owner = node;
    cluster.label = opName;
    graph.clusters.push_back(cluster);
    scope.cluster = cluster.id;
    graph.nodes[node].ownsCluster = cluster.id;
    graph.nodes[node].cluster = cluster.id;
  }
  for (const std::string &arg : regionArgs)
    scope.names[arg] = node;
  scopes.push_back(std::move(scope));
}

bool GraphBuilder::build(size_t first, std::string &error) {
  SourceLoc headerLoc;
  std::string header = splitLoc(trim(lines[first]), aliases, headerLoc);
  functionHeader(header, graph.function);
  graph.functionLine = static_cast<int>(first) + 1;
  scopes.push_back(Scope());
  if (options.collapseRegions && hasBlocks(first)) {
    // A control-flow graph: the arguments belong to the entry block.
    int entry = addNode("^entry", OpKind::Block, graph.functionLine);
    graph.nodes[entry].signature = "block";
    currentBlock = entry;
  }
  functionArguments(header, graph.functionLine);

  for (size_t i = first + 1; i < lines.size(); ++i) {
    int irLine = static_cast<int>(i) + 1;
    std::string text = trim(lines[i]);
    if (text.empty() || text[0] == '#' || text.compare(0, 2, "//") == 0)
      continue;
    SourceLoc loc;
    std::string body = splitLoc(text, aliases, loc);
    if (body.empty())
      continue;
    if (body[0] == '}' || body.compare(0, 2, ")}") == 0) {
      Scope &closing = scopes.back();
      int owner = closing.owner;
      bool wasCollapsedRoot = closing.collapsed &&
                              (scopes.size() < 2 || !scopes[scopes.size() - 2].collapsed);
      if (owner >= 0 && !graph.nodes[owner].loc.valid() && loc.valid())
        graph.nodes[owner].loc = loc;
      // "} -> tensor<4xf32>": the result type of a region op comes last.
      std::string closingType = typeSummary(body);
      if (owner >= 0 && !closingType.empty() &&
          graph.nodes[owner].kind != OpKind::Block &&
          (!closing.collapsed || wasCollapsedRoot))
        graph.nodes[owner].type = closingType;
      bool reopens = body.back() == '{';
      bool collapsed = closing.collapsed;
      int cluster = closing.cluster;
      popScope();
      if (scopes.empty()) { // end of the function body
        for (auto &[user, name] : blockUses) {
          auto it = blocks.find(name);
          if (it != blocks.end())
            addEdge(user, it->second, name);
        }
        return true;
      }
      if (reopens) { // "} else {", "}, {": the same op's next region
        Scope scope;
        scope.owner = owner;
        scope.collapsed = collapsed;
        scope.cluster = cluster;
        scopes.push_back(std::move(scope));
      } else if (wasCollapsedRoot) {
        collapsedOwner = -1;
      }
      continue;
    }
    if (body[0] == '^') {
      blockLabel(body, irLine);
      continue;
    }
    opLine(body, loc, irLine);
  }
  error = "line " + std::to_string(graph.functionLine) + ": the body of @" +
          graph.function + " is not closed (missing '}')";
  return false;
}

/// Completes each node's signature (its op text up to SSA names) with what
/// the text alone misses: its location (known only at the closing brace for
/// ops with regions), the ops that produce its operands, and for an op with
/// regions the ops of its body. Two snapshots' nodes with equal signatures
/// are the same op, untouched by the pass between them.
void finalizeSignatures(IRGraph &graph) {
  std::vector<std::vector<std::string>> producers(graph.nodes.size());
  for (const Edge &edge : graph.edges)
    producers[edge.to].push_back(graph.nodes[edge.from].opName);
  std::vector<std::string> bodies(graph.clusters.size());
  for (const Node &node : graph.nodes)
    if (node.cluster >= 0 && node.ownsCluster != node.cluster)
      bodies[node.cluster] += node.opName + ";";
  for (Node &node : graph.nodes) {
    std::vector<std::string> &from = producers[node.id];
    std::sort(from.begin(), from.end());
    std::string signature = node.signature + " @" + node.loc.file + ":" +
                            std::to_string(node.loc.line) + ":" +
                            std::to_string(node.loc.column) + " <-";
    for (const std::string &name : from)
      signature += " " + name;
    if (node.ownsCluster >= 0)
      signature += " {" + bodies[node.ownsCluster] + "}";
    if (node.collapsedOps > 0)
      signature += " (" + std::to_string(node.collapsedOps) + " ops)";
    node.signature = std::move(signature);
  }
}

} // namespace

std::vector<std::string> listFunctions(const std::string &irText) {
  std::vector<std::string> names;
  for (const std::string &raw : splitLines(irText)) {
    // Headers end in '{'; their location is printed after the closing '}'.
    std::string name;
    if (functionHeader(trim(raw), name))
      names.push_back(name);
  }
  return names;
}

bool buildGraph(const std::string &irText, const GraphOptions &options,
                IRGraph &graph, std::string &error) {
  graph = IRGraph();
  std::vector<std::string> lines = splitLines(irText);
  LocAliases aliases = collectAliases(lines);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string name;
    if (!functionHeader(trim(lines[i]), name))
      continue;
    if (!options.function.empty() && name != options.function)
      continue;
    GraphBuilder builder(lines, aliases, options, graph);
    if (!builder.build(i, error))
      return false;
    finalizeSignatures(graph);
    return true;
  }
  if (options.function.empty())
    error = "line 1: no function with a body (func.func or llvm.func) in the "
            "IR; pass the IR of a module that defines one";
  else
    error = "line 1: no function @" + options.function +
            " with a body in the IR; choose one of the functions it defines";
  return false;
}

void markChanged(const IRGraph &before, IRGraph &after) {
  std::unordered_map<std::string, int> remaining;
  for (const Node &node : before.nodes)
    if (node.kind != OpKind::Argument)
      ++remaining[node.signature];
  after.changedCount = 0;
  for (Node &node : after.nodes) {
    if (node.kind == OpKind::Argument)
      continue;
    auto it = remaining.find(node.signature);
    if (it != remaining.end() && it->second > 0) {
      --it->second;
      node.changed = false;
    } else {
      node.changed = true;
      ++after.changedCount;
    }
  }
  after.removedCount = 0;
  for (const auto &[signature, count] : remaining)
    after.removedCount += count;
}

} // namespace cuvil::graph
