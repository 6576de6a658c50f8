#include "core/exec/cpu_engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <vector>

namespace tutti::exec {
namespace {

// Posts a chain of dependent tasks: b = a; b = a + b; b *= 3 (scale); b /= 2 (divide).
std::vector<uint64_t> PostChain(LocalEngine& e, const std::vector<int32_t>& a, std::vector<int32_t>& b) {
  const size_t n = a.size();
  std::vector<uint64_t> t;
  t.push_back(*e.Post(LocalTask::Copy(b.data(), a.data(), n, DataType::kInt32)));
  const void* srcs[2] = {a.data(), b.data()};
  t.push_back(*e.Post(LocalTask::Reduce(b.data(), srcs, 2, n, DataType::kInt32, RedOp::kSum)));
  t.push_back(*e.Post(LocalTask::Scale(b.data(), b.data(), n, DataType::kInt32, 3.0)));
  t.push_back(*e.Post(LocalTask::Divide(b.data(), n, DataType::kInt32, 2)));
  return t;
}

void ExpectChainResult(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(b[i], a[i] * 2 * 3 / 2) << "element " << i;
}

TEST(CpuEngine, InlineTasksAreDoneWhenPosted) {
  CpuEngine e(CpuEngine::Mode::kInline);
  EXPECT_EQ(e.name(), "cpu-inline");
  std::vector<int32_t> a(1000), b(1000, -7);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int32_t>(i) - 300;
  auto t = PostChain(e, a, b);
  EXPECT_LT(t[0], t[1]);
  Status st = InternalError("not set");
  EXPECT_TRUE(e.Test(t.front(), t.back(), &st));
  EXPECT_TRUE(st.ok()) << st.ToString();
  ExpectChainResult(a, b);
}

TEST(CpuEngine, WorkerRunsInOrderAndCompletesLater) {
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> ran{0};
  CpuEngine e(CpuEngine::Mode::kWorker, [&](const LocalTask&) {
    gate.wait();
    ran.fetch_add(1);
  });
  EXPECT_EQ(e.name(), "cpu-worker");
  std::vector<int32_t> a(4097), b(4097, 0);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int32_t>(i * 7) - 1000;
  auto t = PostChain(e, a, b);
  Status st;
  EXPECT_FALSE(e.Test(t.front(), t.back(), &st));  // held by the gate
  EXPECT_EQ(e.Wait(t.front(), t.back(), 0.05).code(), Code::kTimeout);
  release.set_value();
  EXPECT_TRUE(e.Wait(t.front(), t.back(), 30).ok());
  EXPECT_EQ(ran.load(), 4);
  ExpectChainResult(a, b);
}

TEST(CpuEngine, AFailedTaskIsReportedForItsTicketOnly) {
  for (auto mode : {CpuEngine::Mode::kInline, CpuEngine::Mode::kWorker}) {
    CpuEngine e(mode);
    std::vector<float> x(16, 1.0f), y(16, 2.0f);
    const void* srcs[2] = {x.data(), y.data()};
    uint64_t ok1 = *e.Post(LocalTask::Reduce(x.data(), srcs, 2, 16, DataType::kFloat32, RedOp::kSum));
    uint64_t bad = *e.Post(LocalTask::Reduce(x.data(), srcs, 2, 16, DataType::kFloat32, RedOp::kAvg));
    uint64_t ok2 = *e.Post(LocalTask::Divide(y.data(), 16, DataType::kFloat32, 2));
    Status st;
    EXPECT_EQ(e.Wait(ok1, ok2, 30).code(), Code::kInvalidArgument);  // done; the failure in range
    EXPECT_TRUE(e.Test(ok1, ok1, &st));
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_TRUE(e.Test(ok2, ok2, &st));
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_TRUE(e.Test(ok1, ok2, &st));
    EXPECT_EQ(st.code(), Code::kInvalidArgument);
    EXPECT_NE(st.message().find("ReduceN"), std::string::npos) << st.ToString();
    EXPECT_TRUE(e.Test(bad, bad, &st));
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(x[0], 3.0f);  // the tasks around the failed one ran
    EXPECT_EQ(y[0], 1.0f);
  }
}

TEST(CpuEngine, ReductionsOfManySourcesAndBadCounts) {
  CpuEngine e;
  std::vector<std::vector<double>> in(LocalTask::kMaxSrcs, std::vector<double>(33));
  std::vector<const void*> srcs;
  for (size_t k = 0; k < in.size(); ++k) {
    for (size_t i = 0; i < 33; ++i) in[k][i] = static_cast<double>(k + i);
    srcs.push_back(in[k].data());
  }
  std::vector<double> out(33);
  Status st;
  uint64_t t = *e.Post(LocalTask::Reduce(out.data(), srcs.data(), static_cast<int>(srcs.size()), 33, DataType::kFloat64, RedOp::kMax));
  ASSERT_TRUE(e.Test(t, t, &st));
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(out[5], 63.0 + 5);
  srcs.push_back(out.data());
  t = *e.Post(LocalTask::Reduce(out.data(), srcs.data(), static_cast<int>(srcs.size()), 33, DataType::kFloat64, RedOp::kMax));
  ASSERT_TRUE(e.Test(t, t, &st));
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  t = *e.Post(LocalTask::Copy(nullptr, out.data(), 4, DataType::kFloat64));
  ASSERT_TRUE(e.Test(t, t, &st));
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
}

TEST(CpuEngine, DestructionRunsWhatIsQueued) {
  std::vector<int64_t> a(100, 5), b(100, 0);
  {
    CpuEngine e(CpuEngine::Mode::kWorker, [](const LocalTask&) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(e.Post(LocalTask::Copy(b.data(), a.data(), 100, DataType::kInt64)).ok());
  }
  EXPECT_EQ(b[99], 5);
}

TEST(CpuEngine, ModesParse) {
  EXPECT_EQ(*ParseCpuEngineMode(""), CpuEngine::Mode::kInline);
  EXPECT_EQ(*ParseCpuEngineMode("inline"), CpuEngine::Mode::kInline);
  EXPECT_EQ(*ParseCpuEngineMode("worker"), CpuEngine::Mode::kWorker);
  EXPECT_EQ(ParseCpuEngineMode("gpu").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace tutti::exec
