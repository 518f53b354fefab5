#include "engine/Oclgrind.h"

#include "engine/Runner.h"
#include "platform/Errors.h"
#include "platform/Pattern.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <tuple>

#include <unistd.h>

namespace rsb {

namespace fs = std::filesystem;

std::string FindOclgrind() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / "oclgrind";
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0)
      return p.string();
  }
  throw UsageError(
      "--oclgrind: no oclgrind on PATH; allowed: --oclgrind where Oclgrind is installed (the "
      "Debian package oclgrind: sudo apt-get install oclgrind, or scripts/install-deps.sh)");
}

bool UnderOclgrind() {
  const char* v = std::getenv(kOclgrindMarker);
  return v && std::string(v) == "1";
}

void ExecUnderOclgrind(const std::string& oclgrind, int argc, char** argv) {
  std::error_code ec;
  const fs::path self = fs::canonical("/proc/self/exe", ec);
  std::vector<std::string> args = {oclgrind,
                                   "--data-races",
                                   "--inst-counts",
                                   "--num-threads",
                                   "1",
                                   ec ? argv[0] : self.string()};
  for (int i = 1; i < argc; ++i)
    args.push_back(argv[i]);
  std::vector<char*> cargs;
  for (auto& a : args)
    cargs.push_back(a.data());
  cargs.push_back(nullptr);
  setenv(kOclgrindMarker, "1", 1);
  execv(oclgrind.c_str(), cargs.data());
  throw DeviceError(fmt::format("--oclgrind: cannot start {}: {}", oclgrind, std::strerror(errno)));
}

namespace {

std::string KindOf(const std::string& headline) {
  auto has = [&](const char* s) { return headline.find(s) != std::string::npos; };
  if (has("Invalid write"))
    return "invalid-write";
  if (has("Invalid read"))
    return "invalid-read";
  if (has("data race"))
    return "data-race";
  if (has("divergence"))
    return "divergence";
  if (has("ninitiali"))
    return "uninitialized";
  return "other";
}

// The .cl file of kernelDir that defines the kernel ("" if none does).
std::string KernelFile(const std::string& kernelDir, const std::string& kernel,
                       std::map<std::string, std::string>& cache) {
  const auto it = cache.find(kernel);
  if (it != cache.end())
    return it->second;
  std::string found;
  const Pattern defines("__kernel\\s+void\\s+" + kernel + "\\s*\\(");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kernelDir, ec)) {
    if (entry.path().extension() != ".cl")
      continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    if (defines.Search(text.str())) {
      found = entry.path().filename().string();
      break;
    }
  }
  return cache[kernel] = found;
}

std::string Trimmed(std::string s) {
  const size_t b = s.find_first_not_of(" \t");
  const size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

namespace {

// A message of Oclgrind's log (its first line, then its tab-indented lines) as a diagnostic,
// its file as Oclgrind named it.
OclgrindDiagnostic Diagnostic(const std::vector<std::string>& m) {
  static const Pattern at(R"(At line (\d+) \(column \d+\) of (.+):$)");
  OclgrindDiagnostic d;
  d.text = Trimmed(m[0]);
  d.kind = KindOf(d.text);
  bool located = false;
  for (size_t i = 1; i < m.size(); ++i) {
    const std::string l = Trimmed(m[i]);
    std::optional<PatternMatch> match;
    if (d.kernel.empty() && l.rfind("Kernel:", 0) == 0) {
      d.kernel = Trimmed(l.substr(7));
    } else if (d.workItem.empty() && l.find("Global(") != std::string::npos) {
      d.workItem = Trimmed(l.substr(l.find("Global(")));
    } else if (d.workItem.empty() && l.rfind("Work-group:", 0) == 0) {
      d.workItem = Trimmed(l.substr(11));
    } else if (!located && (match = at.Search(l))) {
      d.line = std::stoul((*match)[1]);
      d.file = (*match)[2];
      located = true;
    }
  }
  return d;
}

std::tuple<const std::string&, const std::string&, const std::string&, const size_t&> KeyOf(
    const OclgrindDiagnostic& d) {
  return std::tie(d.kind, d.kernel, d.file, d.line);
}

// Adds d to the report's distinct diagnostics where none has its kind, kernel, file and line.
void AddDistinct(std::vector<OclgrindDiagnostic>& distinct, OclgrindDiagnostic d) {
  if (distinct.size() < kMaxOclgrindDiagnostics &&
      std::none_of(distinct.begin(), distinct.end(),
                   [&](const OclgrindDiagnostic& e) { return KeyOf(e) == KeyOf(d); }))
    distinct.push_back(std::move(d));
}

}  // namespace

std::vector<OclgrindDiagnostic> OclgrindMessages(const std::string& log,
                                                 const std::string& kernelDir) {
  // Each message: a first line, then lines that start with a tab; messages are separated by
  // empty lines.
  std::vector<std::vector<std::string>> messages;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    if (line[0] != '\t' || messages.empty())
      messages.push_back({line});
    else
      messages.back().push_back(line);
  }
  std::map<std::string, std::string> files;
  std::vector<OclgrindDiagnostic> out;
  for (const auto& m : messages) {
    OclgrindDiagnostic d = Diagnostic(m);
    if (d.file == "input.cl" || (d.file.empty() && !d.kernel.empty())) {
      const std::string file = d.kernel.empty() ? "" : KernelFile(kernelDir, d.kernel, files);
      if (!file.empty() || d.file.empty())
        d.file = file;
    } else if (!d.file.empty()) {
      d.file = fs::path(d.file).filename().string();
    }
    out.push_back(std::move(d));
  }
  return out;
}

void ParseOclgrindLog(const std::string& log, const std::string& kernelDir, OclgrindReport& out) {
  for (auto& d : OclgrindMessages(log, kernelDir)) {
    ++out.diagnosticCount;
    AddDistinct(out.diagnostics, std::move(d));
  }
  AddCallers(out, kernelDir);
}

bool NeedsLocating(const OclgrindReport& report) {
  return std::any_of(report.diagnostics.begin(), report.diagnostics.end(),
                     [](const OclgrindDiagnostic& d) { return !d.kernel.empty() && !d.line; });
}

void LocateFrom(OclgrindReport& report, const std::vector<OclgrindDiagnostic>& unoptimised,
                const std::string& kernelDir) {
  std::vector<OclgrindDiagnostic> distinct;
  for (OclgrindDiagnostic d : report.diagnostics) {
    const OclgrindDiagnostic* found = nullptr;
    for (const auto& u : unoptimised)
      if (!d.line && u.line && u.kind == d.kind && u.kernel == d.kernel &&
          (!found || (u.workItem == d.workItem && found->workItem != d.workItem)))
        found = &u;
    if (found) {
      d.file = found->file;
      d.line = found->line;
      d.function.clear();
      d.calledFrom.clear();
    }
    AddDistinct(distinct, std::move(d));
  }
  report.diagnostics = std::move(distinct);
  AddCallers(report, kernelDir);
}

namespace {

// The text with comments, string and character literals and preprocessor lines blanked (newlines
// kept, so that offsets and lines are the file's), leaving code only.
std::string CodeOnly(const std::string& text) {
  enum class In { Code, LineComment, Block, String, Char, Directive };
  In state = In::Code;
  std::string code = text;
  bool lineStart = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i], next = i + 1 < text.size() ? text[i + 1] : '\0';
    const bool escaped = i > 0 && text[i - 1] == '\\';
    if (c == '\n') {
      if (state != In::Block && (state != In::Directive || !escaped))
        state = In::Code;
      lineStart = true;
      continue;
    }
    if (state == In::Code) {
      if (c == '/' && (next == '/' || next == '*'))
        state = next == '/' ? In::LineComment : In::Block;
      else if (c == '"')
        state = In::String;
      else if (c == '\'')
        state = In::Char;
      else if (c == '#' && lineStart)
        state = In::Directive;
      lineStart = lineStart && (c == ' ' || c == '\t');
      if (state == In::Code)
        continue;
      if (state == In::LineComment || state == In::Block)
        code[i++] = ' ';  // the comment's first character; its second below
    } else if (state == In::Block && c == '*' && next == '/') {
      code[i++] = ' ';
      state = In::Code;
    } else if ((state == In::String && c == '"' && !escaped) ||
               (state == In::Char && c == '\'' && !escaped)) {
      state = In::Code;
    }
    code[i] = ' ';
  }
  return code;
}

bool IdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The offset of the bracket that closes the one at `open` ('(' or '{'); npos where none does.
size_t Closing(const std::string& code, size_t open) {
  const char o = code[open], c = o == '(' ? ')' : '}';
  size_t depth = 0;
  for (size_t i = open; i < code.size(); ++i)
    if (code[i] == o)
      ++depth;
    else if (code[i] == c && --depth == 0)
      return i;
  return std::string::npos;
}

size_t SkipSpace(const std::string& code, size_t i) {
  while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i])))
    ++i;
  return i;
}

// A function defined in a source file: its name, its lines (from its name to its closing
// brace) and its calls (each identifier followed by '(' in its body, with its line).
struct SourceFunction {
  std::string name, file;
  size_t first = 0, last = 0;
  std::vector<std::pair<std::string, size_t>> calls;
};

// The calls in code[begin, end): identifiers followed by '(' that are not keywords.
std::vector<std::pair<std::string, size_t>> CallsIn(const std::string& code, size_t begin,
                                                    size_t end,
                                                    const std::function<size_t(size_t)>& lineAt) {
  static const std::set<std::string> keywords = {"if",     "for",    "while",
                                                 "switch", "return", "sizeof"};
  std::vector<std::pair<std::string, size_t>> calls;
  for (size_t i = begin; i < end; ++i) {
    if (!IdentifierChar(code[i]) || (i > 0 && IdentifierChar(code[i - 1])))
      continue;
    size_t j = i;
    while (j < end && IdentifierChar(code[j]))
      ++j;
    const std::string name = code.substr(i, j - i);
    if (SkipSpace(code, j) < end && code[SkipSpace(code, j)] == '(' && !keywords.count(name) &&
        !std::isdigit(static_cast<unsigned char>(name[0])))
      calls.emplace_back(name, lineAt(i));
    i = j - 1;
  }
  return calls;
}

// Every function defined in a file: at file scope, an identifier, its parenthesised parameters
// and then '{' (where no '{' follows, a declaration or an attribute: scanning goes on after it).
std::vector<SourceFunction> FunctionsOf(const std::string& file, const std::string& text) {
  const std::string code = CodeOnly(text);
  std::vector<size_t> starts = {0};
  for (size_t i = 0; i < code.size(); ++i)
    if (code[i] == '\n')
      starts.push_back(i + 1);
  const auto lineAt = [&](size_t offset) {
    return size_t(std::upper_bound(starts.begin(), starts.end(), offset) - starts.begin());
  };
  std::vector<SourceFunction> functions;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '{') {  // a struct, an initialiser: not a function's body
      i = std::min(Closing(code, i), code.size());
      continue;
    }
    if (!IdentifierChar(code[i]) || (i > 0 && IdentifierChar(code[i - 1])))
      continue;
    size_t j = i;
    while (j < code.size() && IdentifierChar(code[j]))
      ++j;
    const size_t open = SkipSpace(code, j);
    if (open >= code.size() || code[open] != '(') {
      i = j - 1;
      continue;
    }
    const size_t close = Closing(code, open);
    const size_t body = close == std::string::npos ? close : SkipSpace(code, close + 1);
    if (body >= code.size() || code[body] != '{') {
      i = close == std::string::npos ? code.size() : close;
      continue;
    }
    const size_t end = std::min(Closing(code, body), code.size() - 1);
    functions.push_back(
        {code.substr(i, j - i), file, lineAt(i), lineAt(end), CallsIn(code, body, end, lineAt)});
    i = end;
  }
  return functions;
}

// The functions of kernelDir's .cl and .clh files.
std::vector<SourceFunction> SourceFunctions(const std::string& kernelDir) {
  std::vector<SourceFunction> all;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kernelDir, ec)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cl" && ext != ".clh")
      continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    for (auto& f : FunctionsOf(entry.path().filename().string(), text.str()))
      all.push_back(std::move(f));
  }
  return all;
}

// The calls from the kernel down to the helper (the helper's caller first), by the shortest
// chain of calls among the functions; empty where none leads there.
std::vector<OclgrindCall> CallChain(const std::vector<SourceFunction>& functions,
                                    const std::string& kernel, const std::string& helper) {
  std::map<std::string, std::string> caller = {{kernel, ""}};
  std::vector<std::string> queue = {kernel};
  for (size_t q = 0; q < queue.size() && !caller.count(helper); ++q)
    for (const auto& f : functions)
      if (f.name == queue[q])
        for (const auto& call : f.calls)
          if (!caller.count(call.first) &&
              std::any_of(functions.begin(), functions.end(),
                          [&](const SourceFunction& g) { return g.name == call.first; })) {
            caller[call.first] = queue[q];
            queue.push_back(call.first);
          }
  std::vector<OclgrindCall> chain;
  for (std::string callee = helper; caller.count(callee) && !caller[callee].empty();
       callee = caller[callee]) {
    OclgrindCall c{caller[callee], "", {}};
    for (const auto& f : functions)
      if (f.name == c.function)
        for (const auto& call : f.calls)
          if (call.first == callee &&
              std::find(c.lines.begin(), c.lines.end(), call.second) == c.lines.end()) {
            c.file = c.file.empty() ? f.file : c.file;
            c.lines.push_back(call.second);
          }
    chain.push_back(std::move(c));
  }
  return chain;
}

}  // namespace

void AddCallers(OclgrindReport& report, const std::string& kernelDir) {
  std::optional<std::vector<SourceFunction>> functions;  // read once, where needed
  for (auto& d : report.diagnostics) {
    if (!d.line || d.kernel.empty() || d.file.empty() || !d.function.empty())
      continue;
    if (!functions)
      functions = SourceFunctions(kernelDir);
    const auto in = std::find_if(functions->begin(), functions->end(), [&](const auto& f) {
      return f.file == d.file && f.first <= d.line && d.line <= f.last;
    });
    if (in == functions->end() || in->name == d.kernel)
      continue;
    d.function = in->name;
    d.calledFrom = CallChain(*functions, d.kernel, d.function);
  }
}

void ParseInstructionCounts(const std::string& text, OclgrindReport& out) {
  static const Pattern header(R"(^Instructions executed for kernel '([^']+)':)");
  static const Pattern count(R"(^\s+([\d,.']+) - )");  // 10216, or 10,216 in a locale
  std::istringstream in(text);
  std::string line, kernel;
  while (std::getline(in, line)) {
    std::optional<PatternMatch> m;
    if ((m = header.Search(line))) {
      kernel = (*m)[1];
      out.kernels[kernel];  // a kernel that executed nothing is still listed
    } else if (!kernel.empty() && (m = count.Search(line))) {
      std::string digits = (*m)[1];
      digits.erase(
          std::remove_if(digits.begin(), digits.end(), [](char c) { return c < '0' || c > '9'; }),
          digits.end());
      const uint64_t n = std::stoull(digits);
      out.kernels[kernel] += n;
      out.instructions += n;
    } else if (Trimmed(line).empty()) {
      kernel.clear();
    }
  }
}

namespace {

std::string Where(const OclgrindDiagnostic& d) {
  std::string where = d.file.empty() ? "an unknown place" : d.file;
  if (d.line)
    where += fmt::format(":{}", d.line);
  return where;
}

}  // namespace

// " (LoadOrIdentity, called at Scan.cl:43 in LoadTile, called at Scan.cl:190, 192)" where the
// line is in a helper function; "" where it is in the kernel.
std::string OclgrindHelperText(const OclgrindDiagnostic& d) {
  if (d.function.empty())
    return "";
  std::string s = " (" + d.function;
  for (size_t i = 0; i < d.calledFrom.size(); ++i) {
    const OclgrindCall& c = d.calledFrom[i];
    s += fmt::format(", called at {}:{}", c.file, fmt::join(c.lines, ", "));
    if (i + 1 < d.calledFrom.size())
      s += " in " + c.function;
  }
  return s + ")";
}

std::string OclgrindSummary(const OclgrindReport& report) {
  if (report.diagnostics.empty())
    return fmt::format("oclgrind: no diagnostic, {} instructions", report.instructions);
  const OclgrindDiagnostic& d = report.diagnostics.front();
  std::string s = fmt::format("oclgrind: {} at {}", d.kind, Where(d));
  if (!d.kernel.empty())
    s += " in " + d.kernel + OclgrindHelperText(d);
  if (!d.workItem.empty())
    s += ", work-item " + d.workItem;
  s += " (" + d.text + ")";
  if (report.diagnosticCount > 1) {
    std::vector<std::string> others;
    for (size_t i = 1; i < report.diagnostics.size(); ++i)
      others.push_back(
          fmt::format("{} at {}", report.diagnostics[i].kind, Where(report.diagnostics[i])));
    s += fmt::format("; {} more message{}", report.diagnosticCount - 1,
                     report.diagnosticCount > 2 ? "s" : "");
    if (!others.empty()) {
      s += ": ";
      for (size_t i = 0; i < others.size(); ++i)
        s += (i ? ", " : "") + others[i];
    }
  }
  return s;
}

void ApplyOclgrind(Result& r, OclgrindReport report) {
  const std::string summary = OclgrindSummary(report);
  if (!report.diagnostics.empty()) {
    if (r.status == Status::Passed) {
      r.status = Status::Failed;
      r.message = summary;
    } else {
      r.message = r.message.empty() ? summary : r.message + "; " + summary;
    }
  } else if (r.status == Status::Passed && r.message.empty()) {
    r.message = summary;
  }
  r.oclgrind = std::move(report);
}

}  // namespace rsb
