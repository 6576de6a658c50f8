// The back-end independent part of tutti_perf: the size sweep, data, timing, checking and the
// nccl-tests-style table. A back-end binary's main() is PerfMain with a factory.
#pragma once

#include <functional>
#include <memory>

#include "bench/perf/perf_backend.h"
#include "bench/perf/perf_options.h"

namespace tutti::perf {

// Runs the sweep of `o` on every rank (rank 0 prints). Returns the exit status: 0 when every
// checked element was right, 1 when some were wrong or an operation failed, 2 for a bad setting
// (root outside the communicator, an unknown algorithm).
int RunPerf(PerfBackend& b, const PerfOptions& o, const char* prog = "tutti_perf");

using BackendFactory = std::function<Result<std::unique_ptr<PerfBackend>>(const PerfOptions&)>;

// Parses the command line, prints usage or the flag error (only where launch_rank is 0: every
// rank sees the same flags), creates the back-end (an InvalidArgument from the factory is a
// setting error, printed once by launch rank 0; any other error is printed by every rank) and
// runs RunPerf. Returns the exit status.
int PerfMain(int argc, char** argv, const char* prog, int launch_rank, const BackendFactory& make);

}  // namespace tutti::perf
