// Unit tests of tuttirun's pieces; tools/tuttirun_test.sh runs the real binary.
#include "core/launch/launcher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>

#include "core/launch/line_relay.h"

namespace tutti {
namespace {

Result<LauncherOptions> Parse(std::vector<std::string> args) { return ParseLauncherArgs(args); }

TEST(LauncherArgs, ShortForm) {
  Result<LauncherOptions> o = Parse({"-n", "4", "prog", "-n", "7", "--nnodes=9"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->nproc_per_node, 4);
  EXPECT_EQ(o->nnodes, 1);
  EXPECT_EQ(o->node_rank, 0);
  EXPECT_EQ(o->master_addr, "127.0.0.1");
  EXPECT_EQ(o->master_port, 0);
  EXPECT_TRUE(o->prefix);
  // PROG's own options are PROG's.
  EXPECT_EQ(o->command, (std::vector<std::string>{"prog", "-n", "7", "--nnodes=9"}));
  EXPECT_EQ(Parse({"-n3", "p"})->nproc_per_node, 3);
  EXPECT_EQ(Parse({"p"})->nproc_per_node, 1);
}

TEST(LauncherArgs, LongForms) {
  Result<LauncherOptions> o =
      Parse({"--nproc-per-node=2", "--nnodes", "3", "--node_rank", "2", "--master-addr", "head",
             "--master_port=1234", "--timeout", "2m", "--no-prefix", "--secret", "s", "--",
             "-prog-with-dash", "x"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->nproc_per_node, 2);
  EXPECT_EQ(o->nnodes, 3);
  EXPECT_EQ(o->node_rank, 2);
  EXPECT_EQ(o->master_addr, "head");
  EXPECT_EQ(o->master_port, 1234);
  EXPECT_DOUBLE_EQ(o->timeout_s, 120);
  EXPECT_FALSE(o->prefix);
  EXPECT_EQ(o->secret, "s");
  EXPECT_EQ(o->command, (std::vector<std::string>{"-prog-with-dash", "x"}));
}

TEST(LauncherArgs, Help) {
  EXPECT_TRUE(Parse({"-h"})->help);
  EXPECT_TRUE(Parse({"-n", "2", "--help"})->help);
  EXPECT_NE(LauncherUsage().find("--nproc-per-node"), std::string::npos);
}

TEST(LauncherArgs, Errors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--frobnicate", "p"}, "unknown option --frobnicate"},
      {{"-n"}, "-n needs a value"},
      {{"-n", "0", "p"}, "-n 0 is out of range"},
      {{"-n", "four", "p"}, "\"four\" is not a number"},
      {{"--nnodes", "2", "--node-rank", "2", "p"}, "--node-rank 2 must be less than --nnodes 2"},
      {{"--master-port", "70000", "p"}, "--master-port 70000 is out of range"},
      {{"--timeout", "soon", "p"}, "--timeout"},
      {{"-n", "2"}, "no program"},
      {{"--"}, "no program"},
  };
  for (const auto& [args, want] : cases) {
    Result<LauncherOptions> o = Parse(args);
    ASSERT_FALSE(o.ok()) << want;
    EXPECT_EQ(o.status().code(), Code::kInvalidArgument);
    EXPECT_NE(o.status().message().find(want), std::string::npos) << o.status().message();
  }
}

TEST(LauncherDefaults, OneNodePicksAPortAndASecret) {
  unsetenv("TUTTI_SECRET");
  LauncherOptions o = *Parse({"p"});
  ASSERT_TRUE(ResolveLauncherDefaults(&o).ok());
  EXPECT_GT(o.master_port, 0);
  EXPECT_EQ(o.secret.size(), 32u);
  setenv("TUTTI_SECRET", "fromenv", 1);
  o = *Parse({"p"});
  ASSERT_TRUE(ResolveLauncherDefaults(&o).ok());
  EXPECT_EQ(o.secret, "fromenv");
  o = *Parse({"--secret", "flag", "p"});
  ASSERT_TRUE(ResolveLauncherDefaults(&o).ok());
  EXPECT_EQ(o.secret, "flag");
  unsetenv("TUTTI_SECRET");
}

TEST(LauncherDefaults, SeveralNodesNeedASharedSecret) {
  unsetenv("TUTTI_SECRET");
  LauncherOptions o = *Parse({"--nnodes", "2", "p"});
  Status st = ResolveLauncherDefaults(&o);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("TUTTI_SECRET"), std::string::npos) << st.ToString();
  setenv("TUTTI_SECRET", "shared", 1);
  o = *Parse({"--nnodes", "2", "p"});
  ASSERT_TRUE(ResolveLauncherDefaults(&o).ok());
  EXPECT_EQ(o.secret, "shared");
  EXPECT_EQ(o.master_port, 29500);
  unsetenv("TUTTI_SECRET");
}

// Runs fn with a LineRelay writing into a pipe and returns what came out.
std::string Relayed(size_t max_line, const std::function<void(LineRelay&)>& fn) {
  int p[2];
  EXPECT_EQ(pipe(p), 0);
  {
    LineRelay relay("[rank 3] ", p[1], max_line);
    fn(relay);
  }
  close(p[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(p[0]);
  return out;
}

TEST(LineRelay, PrefixesWholeLines) {
  EXPECT_EQ(Relayed(1024,
                    [](LineRelay& r) {
                      r.Feed("a\nb", 3);
                      EXPECT_EQ(r.pending(), 1u);
                      r.Feed("c\n\nd", 4);
                      r.Flush();
                      r.Flush();
                    }),
            "[rank 3] a\n[rank 3] bc\n[rank 3] \n[rank 3] d\n");
}

TEST(LineRelay, CutsOverlongLines) {
  EXPECT_EQ(Relayed(4, [](LineRelay& r) { r.Feed("abcdefghij\nxy\n", 14); }),
            "[rank 3] abcd\n[rank 3] efgh\n[rank 3] ij\n[rank 3] xy\n");
}

}  // namespace
}  // namespace tutti
