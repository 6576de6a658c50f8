// Fuzz target: environment values (core/base/env.h ParseInt, ParseBool, ParseSeconds and the typed
// readers EnvInt, EnvBool, EnvSeconds). Input: one text, given to every parser and, through
// setenv, to a variable of each type. Checked: an integer prints back to itself when written
// plainly; a boolean is one of the eight documented words; a duration is a number >= 0 (never
// NaN) and its unit scales it; the readers agree with the parsers; errors are kInvalidArgument.
// Integers and durations printed in the documented forms parse back to their values.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/base/env.h"
#include "tests/fuzz/fuzz_util.h"

namespace tutti {
namespace {

template <typename T>
void SameResult(const Result<T>& a, const Result<T>& b, const char* what) {
  FUZZ_CHECK(a.ok() == b.ok(), what);
  if (a.ok()) FUZZ_CHECK(*a == *b || (std::isnan(static_cast<double>(*a)) && std::isnan(static_cast<double>(*b))), what);
}

void CheckText(const std::string& text) {
  Result<int64_t> i = ParseInt("X", text);
  if (i.ok()) {
    if (text.find_first_not_of("-0123456789") == std::string::npos && text[0] != '0' &&
        text.rfind("-0", 0) != 0)
      FUZZ_CHECK(std::to_string(*i) == text, "\"" + text + "\" parsed as " + std::to_string(*i));
  } else {
    FUZZ_CHECK(i.status().code() == Code::kInvalidArgument, i.status().ToString());
  }

  Result<bool> b = ParseBool("X", text);
  bool word = text == "1" || text == "true" || text == "yes" || text == "on" || text == "0" ||
              text == "false" || text == "no" || text == "off";
  FUZZ_CHECK(b.ok() == word, "boolean \"" + text + "\"");
  if (b.ok()) FUZZ_CHECK(*b == (text == "1" || text == "true" || text == "yes" || text == "on"), "boolean value");

  Result<double> s = ParseSeconds("X", text);
  if (s.ok()) {
    FUZZ_CHECK(!std::isnan(*s) && *s >= 0, "duration \"" + text + "\" is " + std::to_string(*s));
  } else {
    FUZZ_CHECK(s.status().code() == Code::kInvalidArgument, s.status().ToString());
  }

  // The readers: an empty value means unset (the default), which the parsers do not see.
  if (text.empty() || text.find('\0') != std::string::npos) return;
  setenv("TUTTI_SOCKET_NSOCKS", text.c_str(), 1);
  setenv("TUTTI_MOVE_WAITERS", text.c_str(), 1);
  setenv("TUTTI_TIMEOUT", text.c_str(), 1);
  SameResult(EnvInt("TUTTI_SOCKET_NSOCKS"), i, "EnvInt");
  SameResult(EnvBool("TUTTI_MOVE_WAITERS"), b, "EnvBool");
  SameResult(EnvSeconds("TUTTI_TIMEOUT"), s, "EnvSeconds");
  unsetenv("TUTTI_SOCKET_NSOCKS");
  unsetenv("TUTTI_MOVE_WAITERS");
  unsetenv("TUTTI_TIMEOUT");
}

void CheckBuilt(fuzz::Input& in) {
  int64_t v = static_cast<int64_t>(in.U64());
  Result<int64_t> i = ParseInt("X", std::to_string(v));
  FUZZ_CHECK(i.ok() && *i == v, "integer " + std::to_string(v));
  static const char* const kUnits[] = {"", "s", "ms", "us", "m", "h"};
  static const double kScale[] = {1, 1, 1e-3, 1e-6, 60, 3600};
  int u = in.U8() % 6;
  uint32_t n = in.U32();
  Result<double> s = ParseSeconds("X", std::to_string(n) + kUnits[u]);
  double want = u == 2 ? n / 1e3 : u == 3 ? n / 1e6 : n * kScale[u];
  FUZZ_CHECK(s.ok() && *s == want, "duration " + std::to_string(n) + kUnits[u]);
}

}  // namespace
}  // namespace tutti

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tutti::CheckText(std::string(reinterpret_cast<const char*>(data), size));
  tutti::fuzz::Input in(data, size);
  tutti::CheckBuilt(in);
  return 0;
}
