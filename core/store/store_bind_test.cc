#include "core/store/store_bind.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace tutti {
namespace {

const std::vector<std::string> kLocal = {"127.0.0.1", "10.1.2.3", "fd00::7"};

TEST(StoreBind, LiteralAddressesOfThisHostAreBoundExactly) {
  unsetenv("TUTTI_STORE_BIND");
  EXPECT_EQ(ChooseStoreBind("10.1.2.3", kLocal)->host, "10.1.2.3");
  EXPECT_EQ(ChooseStoreBind("fd00::7", kLocal)->host, "fd00::7");
  EXPECT_EQ(ChooseStoreBind("127.0.0.1", kLocal)->host, "127.0.0.1");
  EXPECT_EQ(ChooseStoreBind("127.0.0.5", kLocal)->host, "127.0.0.5");  // all of 127/8 is loopback
  EXPECT_EQ(ChooseStoreBind("::1", kLocal)->host, "::1");
  EXPECT_EQ(ChooseStoreBind("localhost", kLocal)->host, "127.0.0.1");
}

TEST(StoreBind, AddressesThatAreNotOursListenEverywhereAndSaySo) {
  unsetenv("TUTTI_STORE_BIND");
  Result<StoreBind> b = ChooseStoreBind("192.0.2.10", kLocal);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "");
  EXPECT_NE(b->reason.find("not an address of this host"), std::string::npos) << b->reason;
  EXPECT_NE(b->reason.find("TUTTI_STORE_BIND"), std::string::npos) << b->reason;
}

TEST(StoreBind, NamesAreResolved) {
  unsetenv("TUTTI_STORE_BIND");
  Resolver fake = [](const std::string& name) -> std::vector<std::string> {
    if (name == "node7") return {"127.0.1.1", "10.1.2.3"};
    if (name == "debian-self") return {"127.0.1.1"};
    if (name == "elsewhere") return {"192.0.2.4"};
    return {};
  };
  EXPECT_EQ(ChooseStoreBind("node7", kLocal, fake)->host, "10.1.2.3");  // the non-loopback local one
  Result<StoreBind> self = ChooseStoreBind("debian-self", kLocal, fake);
  EXPECT_EQ(self->host, "");  // other hosts know this name by another address
  EXPECT_NE(self->reason.find("loopback"), std::string::npos) << self->reason;
  Result<StoreBind> far = ChooseStoreBind("elsewhere", kLocal, fake);
  EXPECT_EQ(far->host, "");
  EXPECT_NE(far->reason.find("not an address of this host"), std::string::npos) << far->reason;
  Result<StoreBind> bad = ChooseStoreBind("no.such.host.invalid", kLocal);  // the real resolver
  EXPECT_EQ(bad.status().code(), Code::kUnavailable) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("no.such.host.invalid"), std::string::npos);
}

TEST(StoreBind, EnvironmentWins) {
  setenv("TUTTI_STORE_BIND", "10.1.2.3", 1);
  EXPECT_EQ(ChooseStoreBind("127.0.0.1", kLocal)->host, "10.1.2.3");
  setenv("TUTTI_STORE_BIND", "0.0.0.0", 1);
  EXPECT_EQ(ChooseStoreBind("127.0.0.1", kLocal)->host, "");
  unsetenv("TUTTI_STORE_BIND");
}

}  // namespace
}  // namespace tutti
