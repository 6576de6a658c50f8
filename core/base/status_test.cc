#include "core/base/status.h"

#include <gtest/gtest.h>

namespace tutti {
namespace {

Status Fails() { return TimeoutError("rank 1: recv from rank 0 timed out"); }
Status Propagates() {
  TUTTI_RETURN_IF_ERROR(Fails());
  return OkStatus();
}
Result<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd");
  return x / 2;
}
Result<int> Quarter(int x) {
  TUTTI_ASSIGN_OR_RETURN(int h, Half(x));
  TUTTI_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(Status, OkByDefault) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().ToString(), "OK");
}

TEST(Status, PropagationAddsBreadcrumbAndKeepsCode) {
  Status s = Propagates();
  EXPECT_EQ(s.code(), Code::kTimeout);
  EXPECT_NE(s.message().find("rank 1: recv from rank 0 timed out"), std::string::npos);
  EXPECT_NE(s.message().find("status_test.cc:"), std::string::npos);
}

TEST(Status, WithContextPrefixes) {
  Status s = RemoteError("closed").WithContext("send to rank 3");
  EXPECT_EQ(s.message(), "send to rank 3: closed");
  EXPECT_TRUE(OkStatus().WithContext("x").ok());
}

TEST(Result, ValueAndError) {
  Result<int> r = Quarter(8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 2);
  Result<int> e = Quarter(6);
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Code::kInvalidArgument);
}

TEST(Result, OkStatusIsNotAValue) {
  Result<int> r{OkStatus()};
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInternal);
}

TEST(Status, SystemErrorNamesErrno) {
  Status s = SystemError("connect to 127.0.0.1:1", ECONNREFUSED);
  EXPECT_EQ(s.code(), Code::kSystemError);
  EXPECT_NE(s.message().find("refused"), std::string::npos);
}

}  // namespace
}  // namespace tutti
