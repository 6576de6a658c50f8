// A message larger than 4 GiB, over shm and tcp (ranks as threads). Every 4 KiB page carries its
// index, so a lost, repeated or misplaced piece is caught; the rest of each page is a constant.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

constexpr size_t kBytes = (size_t{4} << 30) + 4099;  // past 2^32, not page aligned
constexpr size_t kPage = 4096;
constexpr unsigned char kFill = 0xAB;

char* Map(size_t n) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

void Stamp(char* buf) {
  memset(buf, kFill, kBytes);
  for (uint64_t off = 0; off + 8 <= kBytes; off += kPage) memcpy(buf + off, &off, 8);
}

// Offset of the first wrong byte, or -1.
int64_t Check(const char* buf) {
  static unsigned char fill_page[kPage];
  memset(fill_page, kFill, kPage);
  for (uint64_t off = 0; off < kBytes; off += kPage) {
    size_t n = std::min(kPage, kBytes - off);
    if (n >= 8) {
      uint64_t stamp;
      memcpy(&stamp, buf + off, 8);
      if (stamp != off) return static_cast<int64_t>(off);
      if (memcmp(buf + off + 8, fill_page, n - 8) != 0) return static_cast<int64_t>(off + 8);
    } else if (memcmp(buf + off, fill_page, n) != 0) {
      return static_cast<int64_t>(off);
    }
  }
  return -1;
}

class Large : public ::testing::TestWithParam<std::string> {};

TEST_P(Large, MessageBeyond4GiB) {
  CommOptions o;
  o.transport = GetParam();
  o.timeout_s = 240;
  RunThreadRanks(2, [&](Communicator& c) {
    char* buf = Map(kBytes);
    ASSERT_NE(buf, nullptr) << "cannot map " << kBytes << " bytes";
    if (c.rank() == 0) {
      Stamp(buf);
      Status st = c.Send(buf, kBytes, 1, 0);
      EXPECT_TRUE(st.ok()) << st.ToString();
    } else {
      Status st = c.Recv(buf, kBytes, 0, 0);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(Check(buf), -1);
    }
    munmap(buf, kBytes);
  }, o);
}

INSTANTIATE_TEST_SUITE_P(Transports, Large, ::testing::Values("shm", "tcp"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tutti::testing
