#include "core/launch/spawn.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/launch/launch_env.h"

namespace tutti {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Every child of this process has been reaped.
void ExpectNoChildrenLeft() {
  int st;
  EXPECT_EQ(waitpid(-1, &st, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

// Each rank writes one line about its launch environment to a pipe.
std::vector<std::string> RunAndCollect(int nprocs, const SpawnOptions& opts) {
  int p[2];
  EXPECT_EQ(pipe(p), 0);
  Status st = Spawn(
      nprocs,
      [&](int rank) {
        close(p[0]);
        Result<LaunchInfo> info = LaunchInfoFromEnv();
        if (!info.ok()) return 10;
        char line[512];
        int n = snprintf(line, sizeof(line), "%d %d %d %d %d %s %d %s %s\n", rank, info->rank,
                         info->world_size, info->local_rank, info->local_world_size,
                         info->master_addr.c_str(), info->master_port, info->secret.c_str(),
                         info->source.c_str());
        return write(p[1], line, static_cast<size_t>(n)) == n ? 0 : 11;
      },
      opts);
  close(p[1]);
  EXPECT_TRUE(st.ok()) << st.ToString();
  std::istringstream in(ReadAll(p[0]));
  close(p[0]);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(Spawn, EachRankSeesItsEnvironment) {
  std::vector<std::string> lines = RunAndCollect(4, {});
  ASSERT_EQ(lines.size(), 4u);
  std::set<int> ranks;
  std::set<std::string> ports, secrets;
  for (const std::string& l : lines) {
    std::istringstream f(l);
    int fn_rank, rank, world, local, local_world, port;
    std::string addr, secret, source;
    f >> fn_rank >> rank >> world >> local >> local_world >> addr >> port >> secret >> source;
    ASSERT_FALSE(f.fail()) << l;
    EXPECT_EQ(fn_rank, rank) << l;
    EXPECT_EQ(local, rank) << l;
    EXPECT_EQ(world, 4) << l;
    EXPECT_EQ(local_world, 4) << l;
    EXPECT_EQ(addr, "127.0.0.1") << l;
    EXPECT_GT(port, 0) << l;
    EXPECT_EQ(secret.size(), 32u) << l;
    EXPECT_EQ(source, "torchrun") << l;
    ranks.insert(rank);
    ports.insert(std::to_string(port));
    secrets.insert(secret);
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(ports.size(), 1u);
  EXPECT_EQ(secrets.size(), 1u);
  ExpectNoChildrenLeft();
}

TEST(Spawn, GivenAddressPortAndSecret) {
  SpawnOptions opts;
  opts.master_addr = "localhost";
  opts.master_port = 23456;
  opts.secret = "opensesame";
  std::vector<std::string> lines = RunAndCollect(2, opts);
  ASSERT_EQ(lines.size(), 2u);
  for (const std::string& l : lines)
    EXPECT_NE(l.find(" localhost 23456 opensesame torchrun"), std::string::npos) << l;
}

TEST(Spawn, FailingRankIsNamedAndTheOthersAreStopped) {
  auto start = Clock::now();
  Status st = Spawn(4, [](int rank) {
    if (rank == 2) {
      usleep(100 * 1000);
      return 3;
    }
    sleep(100);
    return 0;
  });
  EXPECT_LT(SecondsSince(start), 30.0);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank 2 exited with code 3"), std::string::npos) << st.ToString();
  ExpectNoChildrenLeft();
}

TEST(Spawn, KilledRankNamesTheSignal) {
  Status st = Spawn(3, [](int rank) {
    if (rank == 1) raise(SIGKILL);
    sleep(100);
    return 0;
  });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank 1 was killed by signal 9 (Killed)"), std::string::npos)
      << st.ToString();
  ExpectNoChildrenLeft();
}

TEST(Spawn, ExceptionIsAFailure) {
  Status st = Spawn(2, [](int rank) -> int {
    if (rank == 0) throw std::runtime_error("boom");
    return 0;
  });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank 0 exited with code 1"), std::string::npos) << st.ToString();
}

TEST(Spawn, RankThatIgnoresSigtermIsKilledAfterTheGrace) {
  auto start = Clock::now();
  // Rank 0 fails only once rank 1 ignores SIGTERM (on a loaded machine the SIGTERM could
  // otherwise arrive first and end rank 1 before the grace period is tested).
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  Status st = Spawn(2, [&](int rank) {
    if (rank == 0) {
      ::close(ready[1]);
      char b;
      return ::read(ready[0], &b, 1) == 1 ? 4 : 5;
    }
    signal(SIGTERM, SIG_IGN);
    if (::write(ready[1], "r", 1) != 1) return 6;
    sleep(100);
    return 0;
  });
  ::close(ready[0]);
  ::close(ready[1]);
  double took = SecondsSince(start);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank 0 exited with code 4"), std::string::npos) << st.ToString();
  EXPECT_GT(took, 2.5);
  EXPECT_LT(took, 60.0);  // killed after the grace, not after rank 1's 100 s sleep
  ExpectNoChildrenLeft();
}

TEST(Spawn, Timeout) {
  SpawnOptions opts;
  opts.timeout_s = 0.3;
  auto start = Clock::now();
  Status st = Spawn(2, [](int) { return sleep(100) == 0 ? 0 : 1; }, opts);
  EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
  EXPECT_LT(SecondsSince(start), 30.0);
  ExpectNoChildrenLeft();
}

TEST(Spawn, AllSucceed) {
  EXPECT_TRUE(Spawn(3, [](int rank) { return 0; }).ok());
  ExpectNoChildrenLeft();
}

TEST(Spawn, BadArguments) {
  EXPECT_EQ(Spawn(0, [](int) { return 0; }).code(), Code::kInvalidArgument);
  EXPECT_EQ(Spawn(-2, [](int) { return 0; }).code(), Code::kInvalidArgument);
  SpawnOptions opts;
  opts.timeout_s = -1;
  EXPECT_EQ(Spawn(1, [](int) { return 0; }, opts).code(), Code::kInvalidArgument);
}

TEST(PickFreePort, ReturnsAPortThatCanBeBound) {
  Result<int> port = PickFreePort("127.0.0.1");
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  EXPECT_GT(*port, 0);
  EXPECT_LT(*port, 65536);
  EXPECT_FALSE(PickFreePort("no.such.host.invalid").ok());
}

TEST(RandomSecret, IsHexAndDiffers) {
  std::string a = *RandomSecret(), b = *RandomSecret();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace tutti
