// Communicator::Register / Deregister / MemoryOf on real ranks (threads), and that calls on
// registered buffers work as on any other.
#include <gtest/gtest.h>

#include <vector>

#include "core/communicator.h"
#include "core/mem/registration_cache.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

TEST(Registration, RegisterReuseDeregister) {
  RunThreadRanks(2, [](Communicator& c) {
    std::vector<float> buf(1024, 1.0f);
    auto whole = c.Register(buf.data(), buf.size() * sizeof(float));
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    EXPECT_EQ((*whole)->mem.kind, MemKind::kHost);  // no GPU memory here
    auto part = c.Register(buf.data() + 10, 100 * sizeof(float));
    ASSERT_TRUE(part.ok());
    EXPECT_EQ(part->get(), whole->get());
    EXPECT_EQ(c.MemoryOf(buf.data() + 5, 8).kind, MemKind::kHost);
    ASSERT_TRUE(c.AllReduce(buf.data(), buf.data(), buf.size(), DataType::kFloat32, RedOp::kSum).ok());
    EXPECT_EQ(buf[7], 2.0f);
    ASSERT_TRUE(c.Deregister(*part).ok());
    ASSERT_TRUE(c.Deregister(*whole).ok());
    Status twice = c.Deregister(*whole);
    EXPECT_EQ(twice.code(), Code::kInvalidArgument);
    EXPECT_NE(twice.message().find("rank " + std::to_string(c.rank())), std::string::npos) << twice.ToString();
    EXPECT_EQ(c.Register(nullptr, 8).status().code(), Code::kInvalidArgument);
  });
}

}  // namespace
}  // namespace tutti::testing
