#include "core/base/env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tutti {
namespace {

TEST(Env, DefaultsAndOverrides) {
  unsetenv("TUTTI_SOCKET_NSOCKS");
  EXPECT_EQ(*EnvInt("TUTTI_SOCKET_NSOCKS"), 2);
  setenv("TUTTI_SOCKET_NSOCKS", "4", 1);
  EXPECT_EQ(*EnvInt("TUTTI_SOCKET_NSOCKS"), 4);
  setenv("TUTTI_SOCKET_NSOCKS", "four", 1);
  Result<int64_t> bad = EnvInt("TUTTI_SOCKET_NSOCKS");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("TUTTI_SOCKET_NSOCKS"), std::string::npos);
  unsetenv("TUTTI_SOCKET_NSOCKS");
}

TEST(Env, UndeclaredNameIsAnError) {
  EXPECT_EQ(EnvString("TUTTI_NO_SUCH_VARIABLE").status().code(), Code::kInternal);
  EXPECT_FALSE(EnvRaw("TUTTI_NO_SUCH_VARIABLE").has_value());
}

TEST(Env, Durations) {
  EXPECT_DOUBLE_EQ(*ParseSeconds("X", "30"), 30);
  EXPECT_DOUBLE_EQ(*ParseSeconds("X", "250ms"), 0.25);
  EXPECT_DOUBLE_EQ(*ParseSeconds("X", "2m"), 120);
  EXPECT_FALSE(ParseSeconds("X", "soon").ok());
  EXPECT_FALSE(ParseSeconds("X", "5 parsecs").ok());
  EXPECT_FALSE(ParseSeconds("X", "-1").ok());
}

TEST(Env, Booleans) {
  EXPECT_TRUE(*ParseBool("X", "1"));
  EXPECT_FALSE(*ParseBool("X", "off"));
  EXPECT_FALSE(ParseBool("X", "maybe").ok());
}

TEST(Env, EveryVariableIsDocumentedInTheReadme) {
  std::ifstream in("README.md");
  ASSERT_TRUE(in.good()) << "README.md not found in the test's runfiles";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  for (const EnvVar& v : EnvRegistry()) {
    EXPECT_NE(readme.find(std::string("`") + v.name + "`"), std::string::npos)
        << v.name << " is not documented in README.md";
    EXPECT_GT(std::string(v.doc).size(), 10u) << v.name;
  }
}

}  // namespace
}  // namespace tutti
