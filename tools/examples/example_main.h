// Shared by the collective examples: forms the world communicator from the launcher's
// environment and runs the example's body, printing any error.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "core/communicator.h"

// Prints the error and exits non-zero if `st` failed.
inline void OrDie(const tutti::Status& st) {
  if (!st.ok()) {
    fprintf(stderr, "%s\n", st.ToString().c_str());
    exit(1);
  }
}

inline tutti::Communicator& WorldOrDie() {
  static auto comm = tutti::Communicator::InitFromEnv();
  OrDie(comm.status());
  return **comm;
}
