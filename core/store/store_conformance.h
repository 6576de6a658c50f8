// StoreConformanceTest: the semantics every Store must have, as gtest value-parameterized
// tests. A test binary instantiates them for its kind of store:
//
//   INSTANTIATE_TEST_SUITE_P(InMemory, StoreConformanceTest,
//                            ::testing::Values(StoreFactory{"InMemory", MakeInMemoryEnv}),
//                            StoreFactoryName);
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "core/store/store.h"

namespace tutti {

// One store seen through any number of handles (clients); all handles share the data.
class StoreTestEnv {
 public:
  virtual ~StoreTestEnv() = default;
  // Handle i (0..31) of the store; the same pointer for the same i.
  virtual Store* handle(int i) = 0;
};

struct StoreFactory {
  std::string name;
  std::function<std::unique_ptr<StoreTestEnv>()> make;
};

inline void PrintTo(const StoreFactory& f, std::ostream* os) { *os << f.name; }

inline std::string StoreFactoryName(const ::testing::TestParamInfo<StoreFactory>& info) {
  return info.param.name;
}

class StoreConformanceTest : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override { env_ = GetParam().make(); }
  Store* store() { return env_->handle(0); }
  Store* handle(int i) { return env_->handle(i); }

  std::unique_ptr<StoreTestEnv> env_;
};

}  // namespace tutti
