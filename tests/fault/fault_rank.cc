// fault_rank: one rank of the fault matrix (tests/fault/fault_matrix.sh). It forms a communicator
// from the launch environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TUTTI_SECRET, as
// tuttirun sets them), runs float32 sum all_reduces whose every result element is checked exactly
// (integer values), and prints machine-readable lines while the script breaks something.
//
//   fault_rank --mode init|idle|small|large|mixed [--seconds S] [--idle S] [--small N] [--large-mib M]
//
//   init   init, then one small all_reduce (the script kills a rank while the others are in init)
//   idle   init, one small all_reduce, sleep --idle seconds (default 6), one more small all_reduce
//   small  loop of small all_reduces (--small elements, default 1024)
//   large  loop of large all_reduces (--large-mib MiB, default 64)
//   mixed  alternating small and large ones
// Loops end after --seconds (default 30) on rank 0's clock: rank 0 raises a stop flag carried in
// every all_reduce, so all ranks stop after the same call; an error ends them sooner.
//
// Lines (times are CLOCK_REALTIME seconds, comparable with `date +%s.%N`):
//   START rank=R pid=P t=T                  before init
//   READY rank=R t=T transports=a,b,...     after init and a first checked all_reduce
//   RESULT rank=R status=ok|error|wrong phase=init|warmup|loop|after-idle t_call=T t_end=T
//          ops=N secs=S correct=yes|no msg="..."
//   EXIT rank=R t=T                         after the communicator is released
// t_call is when the call that ended the run began; correct=no if any completed all_reduce
// returned a wrong element. Exit code 0 unless the arguments are bad.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/communicator.h"

namespace {

double Now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Element i of rank r's input in call k: a small integer, so sums are exact in float32.
float Value(size_t i, int r, uint64_t k) { return static_cast<float>((i + 13 * r + k) & 1023); }

struct Run {
  tutti::Communicator* comm;
  uint64_t ops = 0;       // completed and checked all_reduces
  bool correct = true;
  bool stop = false;      // rank 0 raised the stop flag in the last call
  double t_call = 0;      // when the last call began
  std::string wrong;      // first wrong element, if any
};

// One all_reduce of `count` elements (the last is the stop flag), checked element by element.
tutti::Status CheckedAllReduce(Run& run, std::vector<float>& in, std::vector<float>& out, size_t count,
                               bool raise_stop) {
  tutti::Communicator& c = *run.comm;
  const uint64_t k = run.ops;
  for (size_t i = 0; i + 1 < count; ++i) in[i] = Value(i, c.rank(), k);
  in[count - 1] = c.rank() == 0 && raise_stop ? 1.0f : 0.0f;
  run.t_call = Now();
  tutti::Status st = c.AllReduce(in.data(), out.data(), count, tutti::DataType::kFloat32, tutti::RedOp::kSum);
  if (!st.ok()) return st;
  for (size_t i = 0; i + 1 < count; ++i) {
    float want = 0;
    for (int r = 0; r < c.size(); ++r) want += Value(i, r, k);
    if (out[i] != want) {
      run.correct = false;
      run.wrong = "call " + std::to_string(k) + " element " + std::to_string(i) + " of " + std::to_string(count) +
                  " is " + std::to_string(out[i]) + ", expected " + std::to_string(want);
      return tutti::MismatchError(run.wrong);
    }
  }
  const float flag = out[count - 1];
  if (flag != 0.0f && flag != 1.0f) {
    run.correct = false;
    run.wrong = "stop flag of call " + std::to_string(k) + " is " + std::to_string(flag);
    return tutti::MismatchError(run.wrong);
  }
  run.stop = flag == 1.0f;
  ++run.ops;
  return tutti::OkStatus();
}

std::string Quote(std::string s) {
  for (char& ch : s)
    if (ch == '"' || ch == '\n' || ch == '\r') ch = ch == '"' ? '\'' : ' ';
  return "\"" + s + "\"";
}

void Result(int rank, const char* phase, const tutti::Status& st, const Run& run, double t_call, double t_loop) {
  const double t = Now();
  const char* status = st.ok() ? "ok" : (run.correct ? "error" : "wrong");
  printf("RESULT rank=%d status=%s phase=%s t_call=%.6f t_end=%.6f ops=%llu secs=%.2f correct=%s msg=%s\n", rank,
         status, phase, t_call, t, static_cast<unsigned long long>(run.ops), t_loop > 0 ? t - t_loop : 0.0,
         run.correct ? "yes" : "no", Quote(st.ok() ? "" : st.ToString()).c_str());
}

int Usage(const char* argv0) {
  fprintf(stderr, "usage: %s --mode init|idle|small|large|mixed [--seconds S] [--idle S] [--small N] [--large-mib M]\n",
          argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string mode;
  double seconds = 30, idle = 6;
  size_t small = 1024, large_mib = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--mode") mode = v;
    else if (a == "--seconds") seconds = std::atof(v.c_str());
    else if (a == "--idle") idle = std::atof(v.c_str());
    else if (a == "--small") small = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--large-mib") large_mib = std::strtoull(v.c_str(), nullptr, 10);
    else return Usage(argv[0]);
  }
  if (argc % 2 == 0 || small < 2 || large_mib < 1 ||
      (mode != "init" && mode != "idle" && mode != "small" && mode != "large" && mode != "mixed"))
    return Usage(argv[0]);

  const double t_start = Now();
  const char* rank_env = getenv("RANK");
  const int env_rank = rank_env ? std::atoi(rank_env) : -1;
  printf("START rank=%d pid=%d t=%.6f\n", env_rank, static_cast<int>(getpid()), t_start);
  Run run;
  auto comm = tutti::Communicator::InitFromEnv();
  if (!comm.ok()) {
    Result(env_rank, "init", comm.status(), run, t_start, 0);
    printf("EXIT rank=%d t=%.6f\n", env_rank, Now());  // nothing to release
    return 0;
  }
  tutti::Communicator& c = **comm;
  run.comm = &c;
  const size_t large = large_mib << 18;  // floats
  std::vector<float> in(mode == "large" || mode == "mixed" ? large : small), out(in.size());

  const char* phase = "warmup";
  double t_loop = 0;
  tutti::Status st = CheckedAllReduce(run, in, out, small, false);
  if (st.ok()) {
    std::string transports;
    for (int p = 0; p < c.size(); ++p) transports += (p ? "," : "") + c.TransportTo(p);
    printf("READY rank=%d t=%.6f transports=%s\n", c.rank(), Now(), transports.c_str());
    phase = "loop";
    t_loop = Now();
  }
  if (!st.ok() || mode == "init") {
    phase = "warmup";
  } else if (mode == "idle") {
    phase = "after-idle";
    usleep(static_cast<useconds_t>(idle * 1e6));
    t_loop = Now();
    st = CheckedAllReduce(run, in, out, small, false);
  } else {
    for (uint64_t k = 0; st.ok() && !run.stop; ++k) {
      const bool big = mode == "large" || (mode == "mixed" && k % 2 == 1);
      st = CheckedAllReduce(run, in, out, big ? large : small, Now() - t_loop >= seconds);
    }
  }
  const int rank = c.rank();
  Result(rank, phase, st, run, run.t_call, t_loop);
  comm->reset();
  printf("EXIT rank=%d t=%.6f\n", rank, Now());
  return 0;
}
