// Forming the world communicator the ways users launch: explicit options in code, and the
// environments of torchrun/tuttirun, Open MPI's mpirun and Slurm's srun. Real processes; each
// rank passes a token around the ring to prove the communicator works.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "core/communicator.h"
#include "tests/harness/proc_ranks.h"

namespace tutti::testing {
namespace {

constexpr int kRanks = 3;

// Exit codes: 0 ok; 10 init failed; 11 wrong rank/size; 12 ring failed.
int CheckAndRing(Result<std::unique_ptr<Communicator>> comm, int rank) {
  if (!comm.ok()) {
    fprintf(stderr, "rank %d: %s\n", rank, comm.status().ToString().c_str());
    return 10;
  }
  Communicator& c = **comm;
  if (c.rank() != rank || c.size() != kRanks || c.local_size() != kRanks || c.local_rank() != rank) return 11;
  int token = 0;
  int next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
  Status st;
  if (rank == 0) {
    token = 100;
    st = c.Send(&token, sizeof(token), next);
    if (st.ok()) st = c.Recv(&token, sizeof(token), prev);
    if (st.ok() && token != 100 + kRanks - 1) return 12;
  } else {
    st = c.Recv(&token, sizeof(token), prev);
    ++token;
    if (st.ok()) st = c.Send(&token, sizeof(token), next);
  }
  if (!st.ok()) {
    fprintf(stderr, "rank %d: %s\n", rank, st.ToString().c_str());
    return 12;
  }
  return 0;
}

// The harness sets the torchrun-style variables; each case rewrites them as another launcher.
void ClearTorchrunVars() {
  for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}) unsetenv(v);
}

void ExpectAllOk(const std::vector<RankEnd>& ends) {
  for (size_t r = 0; r < ends.size(); ++r) {
    EXPECT_TRUE(ends[r].exited) << "rank " << r << " killed by signal " << ends[r].signal;
    EXPECT_EQ(ends[r].code, 0) << "rank " << r;
  }
}

TEST(Init, TorchrunEnvironment) {
  ExpectAllOk(RunProcRanks(kRanks, [](int rank) { return CheckAndRing(Communicator::InitFromEnv(), rank); }, {}, 60));
}

TEST(Init, ExplicitOptionsInCode) {
  ExpectAllOk(RunProcRanks(kRanks, [](int rank) {
    LaunchInfo info;
    info.rank = rank;
    info.world_size = kRanks;
    info.master_addr = getenv("MASTER_ADDR");
    info.master_port = atoi(getenv("MASTER_PORT"));
    info.secret = "in-code";
    ClearTorchrunVars();
    unsetenv("MASTER_ADDR");
    unsetenv("MASTER_PORT");
    return CheckAndRing(Communicator::Init(info), rank);
  }, {}, 60));
}

TEST(Init, MpirunEnvironment) {
  ExpectAllOk(RunProcRanks(kRanks, [](int rank) {
    ClearTorchrunVars();
    unsetenv("MASTER_ADDR");  // all ranks local: the store is on 127.0.0.1
    setenv("OMPI_COMM_WORLD_RANK", std::to_string(rank).c_str(), 1);
    setenv("OMPI_COMM_WORLD_SIZE", std::to_string(kRanks).c_str(), 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank).c_str(), 1);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(kRanks).c_str(), 1);
    return CheckAndRing(Communicator::InitFromEnv(), rank);
  }, {}, 60));
}

TEST(Init, SrunEnvironment) {
  ExpectAllOk(RunProcRanks(kRanks, [](int rank) {
    ClearTorchrunVars();
    unsetenv("MASTER_ADDR");  // the store's host comes from the node list
    setenv("SLURM_PROCID", std::to_string(rank).c_str(), 1);
    setenv("SLURM_NTASKS", std::to_string(kRanks).c_str(), 1);
    setenv("SLURM_LOCALID", std::to_string(rank).c_str(), 1);
    setenv("SLURM_NTASKS_PER_NODE", std::to_string(kRanks).c_str(), 1);
    setenv("SLURM_NODELIST", "localhost", 1);
    return CheckAndRing(Communicator::InitFromEnv(), rank);
  }, {}, 60));
}

TEST(Init, WrongSecretIsRefused) {
  auto ends = RunProcRanks(2, [](int rank) {
    if (rank == 1) setenv("TUTTI_SECRET", "another-job", 1);
    setenv("TUTTI_STORE_TIMEOUT", "3", 1);
    auto comm = Communicator::InitFromEnv();
    if (comm.ok()) return 1;
    fprintf(stderr, "rank %d: %s\n", rank, comm.status().ToString().c_str());
    if (rank == 1 && comm.status().message().find("secret") == std::string::npos) return 2;
    return 0;
  }, {}, 60);
  ExpectAllOk(ends);
}

// With no launch environment at all a process runs as a 1-rank world and says so on stderr.
TEST(Init, NoLaunchEnvironmentIsA1RankWorldAndSaysSo) {
  int err[2];
  ASSERT_EQ(pipe(err), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(err[1], 2);
    for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                          "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS"})
      unsetenv(v);
    auto comm = Communicator::InitFromEnv();
    _exit(comm.ok() && (*comm)->size() == 1 && (*comm)->rank() == 0 ? 0 : 1);
  }
  close(err[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = read(err[0], buf, sizeof(buf))) > 0;) text.append(buf, n);
  close(err[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_NE(text.find("no launch environment"), std::string::npos) << text;
  EXPECT_NE(text.find("1-rank world"), std::string::npos) << text;
}

}  // namespace
}  // namespace tutti::testing
