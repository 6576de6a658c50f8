// CheckCollectives (tests/coll/coll_check.h) on n ranks that are threads of the test: every rank
// checks, then destroys its communicator; the test fails unless more than `min_cases` calls were
// checked and none failed (failures are printed, naming rank and case).
#pragma once

#include "core/communicator.h"
#include "tests/coll/coll_check.h"

namespace tutti::testing {

void ExpectCollectivesPassOnThreadRanks(int n, const CommOptions& opts, const CollCheckConfig& cfg,
                                        int min_cases = 100);

}  // namespace tutti::testing
