// The one registry of environment variables tutti reads. Every variable is declared once in
// env.cc with its type, default and documentation; reading an undeclared name is a bug and
// returns an Internal error. README.md documents each one (a test checks that it does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace tutti {

enum class EnvType { kString, kInt, kBool, kSeconds };

struct EnvVar {
  const char* name;
  EnvType type;
  const char* default_value;  // "" = unset
  const char* doc;
};

// All declared variables, in documentation order.
const std::vector<EnvVar>& EnvRegistry();
const EnvVar* FindEnvVar(const std::string& name);

// Raw value if set and non-empty (declared names only; an undeclared name aborts in debug
// builds and returns nullopt otherwise).
std::optional<std::string> EnvRaw(const char* name);

// Typed readers: the value if set, else the declared default. A value that does not parse
// ("abc" for an integer) is an InvalidArgument naming the variable.
Result<std::string> EnvString(const char* name);
Result<int64_t> EnvInt(const char* name);
Result<bool> EnvBool(const char* name);
Result<double> EnvSeconds(const char* name);

// Parsers used by the readers, exposed for tests and for explicit options.
Result<int64_t> ParseInt(const std::string& name, const std::string& text);
Result<bool> ParseBool(const std::string& name, const std::string& text);
// "30", "30s", "250ms", "2m": seconds as a double.
Result<double> ParseSeconds(const std::string& name, const std::string& text);

}  // namespace tutti
