// ExpandSlurmNodeList: Slurm's compressed host lists ("node[01-04,07],gpu5").
#include <cstdint>
#include <string>
#include <vector>

#include "core/launch/launch_env.h"

namespace tutti {

namespace {

constexpr size_t kMaxHosts = 1 << 20;  // a bigger list is a typo, not a cluster
constexpr size_t kMaxBytes = 64 << 20;  // of all host names together (long names times ranges)

Status Malformed(const std::string& list, const std::string& why) {
  return InvalidArgument("malformed Slurm node list \"" + list + "\": " + why);
}

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// "01-04,07" -> {"01","02","03","04","07"}; the width of a range's first number is kept.
Status ExpandRanges(const std::string& list, const std::string& ranges,
                    std::vector<std::string>* out) {
  size_t start = 0;
  while (true) {
    size_t comma = ranges.find(',', start);
    std::string item = ranges.substr(start, comma == std::string::npos ? comma : comma - start);
    size_t dash = item.find('-');
    std::string lo_s = item.substr(0, dash);
    std::string hi_s = dash == std::string::npos ? lo_s : item.substr(dash + 1);
    if (!AllDigits(lo_s) || !AllDigits(hi_s) || lo_s.size() > 9 || hi_s.size() > 9)
      return Malformed(list, "\"" + item + "\" is not a number or a range like 01-04");
    int64_t lo = std::stoll(lo_s), hi = std::stoll(hi_s);
    if (hi < lo) return Malformed(list, "range \"" + item + "\" runs backwards");
    if (static_cast<size_t>(hi - lo) + out->size() >= kMaxHosts)
      return Malformed(list, "more than " + std::to_string(kMaxHosts) + " hosts");
    for (int64_t v = lo; v <= hi; ++v) {
      std::string digits = std::to_string(v);
      if (digits.size() < lo_s.size()) digits.insert(0, lo_s.size() - digits.size(), '0');
      out->push_back(digits);
    }
    if (comma == std::string::npos) return OkStatus();
    start = comma + 1;
  }
}

// One host expression without top-level commas: text and bracket groups, multiplied out.
// *bytes: the length of all host names so far, kept under kMaxBytes.
Status ExpandHost(const std::string& list, const std::string& expr,
                  std::vector<std::string>* out, size_t* bytes) {
  if (expr.empty()) return Malformed(list, "empty host name");
  std::vector<std::string> names = {""};
  size_t name_len = 0;  // the longest name so far
  size_t i = 0;
  while (i < expr.size()) {
    if (expr[i] == ']') return Malformed(list, "']' without '['");
    if (expr[i] != '[') {
      size_t end = expr.find_first_of("[]", i);
      if (end == std::string::npos) end = expr.size();
      name_len += end - i;
      if (names.size() * name_len + *bytes > kMaxBytes)
        return Malformed(list, "more than " + std::to_string(kMaxBytes) + " bytes of host names");
      for (std::string& n : names) n += expr.substr(i, end - i);
      i = end;
      continue;
    }
    size_t close = expr.find(']', i);
    if (close == std::string::npos) return Malformed(list, "'[' without ']'");
    std::string inner = expr.substr(i + 1, close - i - 1);
    if (inner.find('[') != std::string::npos) return Malformed(list, "nested '['");
    std::vector<std::string> suffixes;
    TUTTI_RETURN_IF_ERROR(ExpandRanges(list, inner, &suffixes));
    if (names.size() * suffixes.size() + out->size() > kMaxHosts)
      return Malformed(list, "more than " + std::to_string(kMaxHosts) + " hosts");
    size_t widest = 0;
    for (const std::string& x : suffixes) widest = x.size() > widest ? x.size() : widest;
    name_len += widest;
    if (names.size() * suffixes.size() * name_len + *bytes > kMaxBytes)
      return Malformed(list, "more than " + std::to_string(kMaxBytes) + " bytes of host names");
    std::vector<std::string> next;
    next.reserve(names.size() * suffixes.size());
    for (const std::string& n : names)
      for (const std::string& s : suffixes) next.push_back(n + s);
    names = std::move(next);
    i = close + 1;
  }
  *bytes += names.size() * name_len;
  for (std::string& n : names) out->push_back(std::move(n));
  return OkStatus();
}

}  // namespace

Result<std::vector<std::string>> ExpandSlurmNodeList(const std::string& list) {
  std::vector<std::string> hosts;
  size_t bytes = 0;
  if (list.empty()) return Malformed(list, "empty");
  for (char c : list)
    if (c == ' ' || c == '\t' || c == '\n') return Malformed(list, "contains white space");
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size()) {
      if (list[i] == '[') ++depth;
      if (list[i] == ']') --depth;
      if (depth < 0 || depth > 1) return Malformed(list, "unbalanced brackets");
      if (list[i] != ',' || depth != 0) continue;
    }
    TUTTI_RETURN_IF_ERROR(ExpandHost(list, list.substr(start, i - start), &hosts, &bytes));
    start = i + 1;
  }
  if (depth != 0) return Malformed(list, "'[' without ']'");
  return hosts;
}

}  // namespace tutti
