#include "core/launch/launch_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <initializer_list>
#include <utility>

namespace tutti {
namespace {

using Vars = std::initializer_list<std::pair<const char*, const char*>>;

class LaunchEnvTest : public ::testing::Test {
 protected:
  void SetUp() override { Clear(); }
  void TearDown() override { Clear(); }

  static void Clear() {
    for (const char* v :
         {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
          "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
          "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE",
          "SLURM_STEP_TASKS_PER_NODE", "SLURM_NODEID", "SLURM_NODELIST", "MASTER_ADDR",
          "MASTER_PORT", "TUTTI_SECRET"})
      unsetenv(v);
  }
  static void Set(Vars vars) {
    for (const auto& [k, v] : vars) setenv(k, v, 1);
  }
  // The error of LaunchInfoFromEnv(); fails the test when it succeeded.
  static std::string Error() {
    Result<LaunchInfo> r = LaunchInfoFromEnv();
    EXPECT_FALSE(r.ok()) << "rank " << (r.ok() ? r->rank : -1) << " from "
                         << (r.ok() ? r->source : "");
    if (r.ok()) return "";
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
    return r.status().message();
  }
};

#define EXPECT_HAS(text, part)                                          \
  do {                                                                  \
    std::string text_ = (text);                                         \
    EXPECT_NE(text_.find(part), std::string::npos) << "\"" << text_ << "\""; \
  } while (0)

TEST_F(LaunchEnvTest, NothingSetIsASingleRank) {
  Result<LaunchInfo> r = LaunchInfoFromEnv();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->source, "single");
  EXPECT_EQ(r->rank, 0);
  EXPECT_EQ(r->world_size, 1);
  EXPECT_EQ(r->local_rank, 0);
  EXPECT_EQ(r->local_world_size, 1);
  EXPECT_EQ(r->master_addr, "127.0.0.1");
  EXPECT_EQ(r->master_port, 0);
  EXPECT_EQ(r->secret, "");
}

TEST_F(LaunchEnvTest, Torchrun) {
  Set({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"},
       {"MASTER_ADDR", "head"}, {"MASTER_PORT", "1234"}, {"TUTTI_SECRET", "s3"}});
  Result<LaunchInfo> r = LaunchInfoFromEnv();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->source, "torchrun");
  EXPECT_EQ(r->rank, 5);
  EXPECT_EQ(r->world_size, 8);
  EXPECT_EQ(r->local_rank, 1);
  EXPECT_EQ(r->local_world_size, 4);
  EXPECT_EQ(r->master_addr, "head");
  EXPECT_EQ(r->master_port, 1234);
  EXPECT_EQ(r->secret, "s3");
}

TEST_F(LaunchEnvTest, TorchrunWithoutLocalVariablesIsOneHost) {
  Set({{"RANK", "2"}, {"WORLD_SIZE", "3"}});
  Result<LaunchInfo> r = LaunchInfoFromEnv();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->local_rank, 2);
  EXPECT_EQ(r->local_world_size, 3);
  EXPECT_EQ(r->master_addr, "127.0.0.1");
  EXPECT_EQ(r->master_port, 29500);
}

TEST_F(LaunchEnvTest, MpirunOnOneHost) {
  Set({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
       {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  Result<LaunchInfo> r = LaunchInfoFromEnv();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->source, "mpirun");
  EXPECT_EQ(r->rank, 3);
  EXPECT_EQ(r->world_size, 4);
  EXPECT_EQ(r->local_rank, 3);
  EXPECT_EQ(r->local_world_size, 4);
  EXPECT_EQ(r->master_addr, "127.0.0.1");
  EXPECT_EQ(r->master_port, 29500);
}

TEST_F(LaunchEnvTest, MpirunAcrossHostsNeedsMasterAddr) {
  Set({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
       {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  EXPECT_HAS(Error(), "MASTER_ADDR");
  Set({{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "4000"}});
  Result<LaunchInfo> r = LaunchInfoFromEnv();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->master_addr, "10.0.0.1");
  EXPECT_EQ(r->master_port, 4000);
  EXPECT_EQ(r->local_rank, 1);
  EXPECT_EQ(r->local_world_size, 2);
}

TEST_F(LaunchEnvTest, Srun) {
  Set({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
       {"SLURM_NTASKS_PER_NODE", "4(x2)"}, {"SLURM_NODELIST", "gpu[07-08]"}});
  Result<LaunchInfo> r = LaunchInfoFromEnv();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->source, "srun");
  EXPECT_EQ(r->rank, 5);
  EXPECT_EQ(r->world_size, 8);
  EXPECT_EQ(r->local_rank, 1);
  EXPECT_EQ(r->local_world_size, 4);
  EXPECT_EQ(r->master_addr, "gpu07");
  EXPECT_EQ(r->master_port, 29500);
  // MASTER_ADDR wins over the node list.
  Set({{"MASTER_ADDR", "login1"}});
  EXPECT_EQ(LaunchInfoFromEnv()->master_addr, "login1");
}

TEST_F(LaunchEnvTest, SrunUnevenNodesUseThisNodesEntry) {
  Set({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "5"}, {"SLURM_LOCALID", "2"},
       {"SLURM_STEP_TASKS_PER_NODE", "2,3"}, {"SLURM_NODEID", "1"},
       {"SLURM_NODELIST", "a,b"}});
  Result<LaunchInfo> r = LaunchInfoFromEnv();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->local_world_size, 3);
  EXPECT_EQ(r->master_addr, "a");
  Set({{"SLURM_NTASKS_PER_NODE", "lots"}});
  EXPECT_HAS(Error(), "SLURM_NTASKS_PER_NODE");
}

TEST_F(LaunchEnvTest, TasksPerNodeLists) {
  EXPECT_EQ(*SlurmTasksOnNode("4", 0), 4);
  EXPECT_EQ(*SlurmTasksOnNode("4", 3), 4);
  EXPECT_EQ(*SlurmTasksOnNode("4(x2),3", 1), 4);
  EXPECT_EQ(*SlurmTasksOnNode("4(x2),3", 2), 3);
  EXPECT_EQ(*SlurmTasksOnNode("2,3", 1), 3);
  EXPECT_EQ(*SlurmTasksOnNode("2,3", 7), 2);  // past the end: the first entry
  for (const char* bad : {"", "x", "4(x", "4(x2", "4(2)", "4,", "0", "4;3"})
    EXPECT_FALSE(SlurmTasksOnNode(bad, 0).ok()) << bad;
}

TEST_F(LaunchEnvTest, Precedence) {
  Set({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"OMPI_COMM_WORLD_RANK", "1"},
       {"OMPI_COMM_WORLD_SIZE", "2"}});
  EXPECT_EQ(LaunchInfoFromEnv()->source, "mpirun");
  EXPECT_EQ(LaunchInfoFromEnv()->rank, 1);
  Set({{"RANK", "2"}, {"WORLD_SIZE", "3"}});
  EXPECT_EQ(LaunchInfoFromEnv()->source, "torchrun");
  EXPECT_EQ(LaunchInfoFromEnv()->rank, 2);
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(LaunchInfoFromEnv()->source, "srun");
}

TEST_F(LaunchEnvTest, BadValuesNameTheVariable) {
  Set({{"RANK", "abc"}, {"WORLD_SIZE", "4"}});
  EXPECT_HAS(Error(), "RANK=\"abc\"");
  Set({{"RANK", "4"}});
  EXPECT_HAS(Error(), "RANK=\"4\"");
  Set({{"RANK", "-1"}});
  EXPECT_HAS(Error(), "RANK=\"-1\"");
  Set({{"RANK", "1"}, {"WORLD_SIZE", "0"}});
  EXPECT_HAS(Error(), "WORLD_SIZE=\"0\"");
  Set({{"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}});
  EXPECT_HAS(Error(), "LOCAL_RANK=\"2\"");
  Set({{"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "5"}});
  EXPECT_HAS(Error(), "LOCAL_WORLD_SIZE=\"5\"");
  Set({{"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}});
  EXPECT_HAS(Error(), "MASTER_PORT=\"70000\"");
  Set({{"MASTER_PORT", "0"}});
  EXPECT_HAS(Error(), "MASTER_PORT=\"0\"");
  Set({{"MASTER_PORT", "12x"}});
  EXPECT_HAS(Error(), "MASTER_PORT=\"12x\"");
  Set({{"MASTER_PORT", "29400"}});
  EXPECT_TRUE(LaunchInfoFromEnv().ok());
}

TEST_F(LaunchEnvTest, HalfAPairIsAnError) {
  Set({{"RANK", "0"}});
  EXPECT_HAS(Error(), "WORLD_SIZE");
  Clear();
  Set({{"OMPI_COMM_WORLD_SIZE", "2"}});
  EXPECT_HAS(Error(), "OMPI_COMM_WORLD_RANK");
}

TEST_F(LaunchEnvTest, BadNodeListIsAnError) {
  Set({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"},
       {"SLURM_NTASKS_PER_NODE", "1"}, {"SLURM_NODELIST", "n[1-"}});
  EXPECT_HAS(Error(), "SLURM_NODELIST");
}

std::vector<std::string> Expand(const std::string& list) {
  Result<std::vector<std::string>> r = ExpandSlurmNodeList(list);
  EXPECT_TRUE(r.ok()) << list << ": " << r.status().ToString();
  return r.ok() ? *r : std::vector<std::string>{};
}

using Hosts = std::vector<std::string>;

TEST(SlurmNodeList, Expands) {
  EXPECT_EQ(Expand("a[1-3]"), (Hosts{"a1", "a2", "a3"}));
  EXPECT_EQ(Expand("n[008-010]"), (Hosts{"n008", "n009", "n010"}));
  EXPECT_EQ(Expand("x,y[1,3-4]"), (Hosts{"x", "y1", "y3", "y4"}));
  EXPECT_EQ(Expand("node[01-04,07],gpu5"),
            (Hosts{"node01", "node02", "node03", "node04", "node07", "gpu5"}));
  EXPECT_EQ(Expand("solo"), (Hosts{"solo"}));
  EXPECT_EQ(Expand("r[1-2]n[1-2]"), (Hosts{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(Expand("n[9-11]-ib"), (Hosts{"n9-ib", "n10-ib", "n11-ib"}));
}

TEST(SlurmNodeList, MalformedIsAnError) {
  for (const char* bad : {"n[1-", "n[1-3", "n1]", "n[3-1]", "n[a-b]", "n[]", "n[1-2-3]", "a,,b",
                          ",a", "a,", "", "n[[1]]", "n[1 ,2]", "n[0-99999999]"}) {
    Result<std::vector<std::string>> r = ExpandSlurmNodeList(bad);
    EXPECT_FALSE(r.ok()) << "\"" << bad << "\" gave " << (r.ok() ? r->size() : 0) << " hosts";
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace tutti
