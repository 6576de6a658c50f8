#include "core/base/logging.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tutti {
namespace {

int g_evaluated = 0;
int Count() { return ++g_evaluated; }

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Logging, OffCostsNoArgumentEvaluation) {
  unsetenv("TUTTI_DEBUG");
  ReloadLogConfig();
  g_evaluated = 0;
  TUTTI_LOG(Info, Net, "value %d", Count());
  EXPECT_EQ(g_evaluated, 0);
  EXPECT_FALSE(LogEnabled(LogLevel::kWarn, kLogNet));
  EXPECT_TRUE(LogEnabled(LogLevel::kError, kLogNet));
}

TEST(Logging, LevelSubsysAndFile) {
  std::string path = std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") +
                     "/tutti_log_%p.txt";
  setenv("TUTTI_DEBUG", "info", 1);
  setenv("TUTTI_DEBUG_SUBSYS", "NET,SHM", 1);
  setenv("TUTTI_DEBUG_FILE", path.c_str(), 1);
  ReloadLogConfig();
  SetLogRank(3);
  TUTTI_LOG(Info, Net, "hello %s", "net");
  TUTTI_LOG(Info, Store, "hidden store line");
  TUTTI_LOG(Trace, Net, "hidden trace line");
  std::string text =
      Slurp(path.substr(0, path.find("%p")) + std::to_string(getpid()) + ".txt");
  EXPECT_NE(text.find("[3]"), std::string::npos);
  EXPECT_NE(text.find("INFO NET"), std::string::npos);
  EXPECT_NE(text.find("hello net"), std::string::npos);
  EXPECT_EQ(text.find("hidden"), std::string::npos);
  setenv("TUTTI_DEBUG_SUBSYS", "^NET", 1);
  ReloadLogConfig();
  EXPECT_FALSE(LogEnabled(LogLevel::kInfo, kLogNet));
  EXPECT_TRUE(LogEnabled(LogLevel::kInfo, kLogShm));
  unsetenv("TUTTI_DEBUG");
  unsetenv("TUTTI_DEBUG_SUBSYS");
  unsetenv("TUTTI_DEBUG_FILE");
  ReloadLogConfig();
}

TEST(Logging, SubsysParsing) {
  EXPECT_EQ(ParseSubsysList("INIT,p2p"), kLogInit | kLogP2P);
  EXPECT_EQ(ParseSubsysList("ALL"), kLogAll);
  EXPECT_EQ(ParseSubsysList("^SHM"), ~static_cast<uint32_t>(kLogShm));
}

}  // namespace
}  // namespace tutti
