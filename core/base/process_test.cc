#include "core/base/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tutti {
namespace {

TEST(Process, LiveZombieAndReapedChildren) {
  EXPECT_FALSE(ProcessGone(getpid()));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  EXPECT_FALSE(ProcessGone(child));
  kill(child, SIGKILL);
  // Not reaped yet: a zombie, which counts as gone.
  for (int i = 0; i < 5000 && !ProcessGone(child); ++i) usleep(1000);
  EXPECT_TRUE(ProcessGone(child));
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(ProcessGone(child));
}

TEST(Process, IdentityRoundTripsOnlyOnThisMachine) {
  const std::string me = ProcessIdentity();
  EXPECT_EQ(LocalPid(me), getpid());
  EXPECT_EQ(LocalPid("another-boot/pid:[1] 123"), -1);
  const std::string machine = me.substr(0, me.rfind(' '));
  EXPECT_EQ(LocalPid(machine + " 77"), 77);
  EXPECT_EQ(LocalPid(machine + " 7x"), -1);
  EXPECT_EQ(LocalPid(machine + " -3"), -1);
  EXPECT_EQ(LocalPid(machine), -1);
  EXPECT_EQ(LocalPid(""), -1);
}

}  // namespace
}  // namespace tutti
