#include "bench/perf/perf_options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tutti::perf {
namespace {

bool ParseInt(const std::string& text, long long lo, long long hi, long long* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseDouble(const std::string& text, double* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double v = strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !(v >= 0) || v > 1e9) return false;
  *out = v;
  return true;
}

// Every option: its short letter (0 if none), long name, and whether it takes a value.
struct OptSpec {
  char letter;
  const char* name;
  bool has_value;
};
constexpr OptSpec kOpts[] = {
    {'b', "minbytes", true},   {'e', "maxbytes", true},   {'f', "stepfactor", true},
    {'i', "stepbytes", true},  {'n', "iters", true},      {'w', "warmup_iters", true},
    {'c', "check", true},      {'d', "datatype", true},   {'o', "op", true},
    {'r', "root", true},       {'a', "average", true},    {'z', "blocking", true},
    {'T', "timeout", true},    {'h', "help", false},      {'g', "ngpus", true},
    {'t', "nthreads", true},   {'G', "cudagraph", true},  {0, "coll", true},
    {0, "algo", true},         {0, "debug-corrupt-rank", true}, {0, "barrier", true},
};

const OptSpec* FindShort(char c) {
  for (const auto& o : kOpts)
    if (o.letter == c) return &o;
  return nullptr;
}
const OptSpec* FindLong(const std::string& name) {
  for (const auto& o : kOpts)
    if (name == o.name) return &o;
  return nullptr;
}

std::string Spelling(const OptSpec& o) {
  std::string s = o.letter ? std::string("-") + o.letter : "";
  if (o.letter) s += "/";
  return s + "--" + o.name;
}

Status Bad(const OptSpec& o, const std::string& value, const std::string& want) {
  return InvalidArgument("bad value '" + value + "' for " + Spelling(o) + ": expected " + want);
}

Status Apply(const OptSpec& o, const std::string& v, PerfOptions* p) {
  long long i = 0;
  const std::string name = o.name;
  if (name == "minbytes" || name == "maxbytes" || name == "stepbytes") {
    size_t b = 0;
    if (!ParseBytes(v, &b)) return Bad(o, v, "a size in bytes such as 8, 64K, 256M, 1G");
    (name == "minbytes" ? p->min_bytes : name == "maxbytes" ? p->max_bytes : p->step_bytes) = b;
  } else if (name == "stepfactor") {
    if (!ParseInt(v, 1, 1 << 20, &i)) return Bad(o, v, "a whole number >= 1");
    p->step_factor = static_cast<uint64_t>(i);
  } else if (name == "iters") {
    if (!ParseInt(v, 1, 1 << 30, &i)) return Bad(o, v, "a number of iterations >= 1");
    p->iters = static_cast<int>(i);
  } else if (name == "warmup_iters") {
    if (!ParseInt(v, 0, 1 << 30, &i)) return Bad(o, v, "a number of iterations >= 0");
    p->warmup_iters = static_cast<int>(i);
  } else if (name == "check") {
    if (!ParseInt(v, 0, 1, &i)) return Bad(o, v, "0 or 1");
    p->check = i != 0;
  } else if (name == "datatype") {
    p->types.clear();
    if (v == "all") {
      for (int t = 0; t < kNumDataTypes; ++t) p->types.push_back(static_cast<DataType>(t));
    } else {
      DataType t;
      if (!ParseDataType(v.c_str(), &t))
        return Bad(o, v, "a data type (int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double "
                         "fp8_e4m3 fp8_e5m2) or all");
      p->types.push_back(t);
    }
  } else if (name == "op") {
    p->ops.clear();
    if (v == "all") {
      for (int r = 0; r < kNumRedOps; ++r) p->ops.push_back(static_cast<RedOp>(r));
    } else {
      RedOp r;
      if (!ParseRedOp(v.c_str(), &r)) return Bad(o, v, "sum, prod, min, max, avg, premul_sum, band, bor, bxor or all");
      p->ops.push_back(r);
    }
  } else if (name == "root") {
    if (!ParseInt(v, 0, 1 << 30, &i)) return Bad(o, v, "a rank >= 0");
    p->root = static_cast<int>(i);
  } else if (name == "average") {
    if (!ParseInt(v, 0, 3, &i)) return Bad(o, v, "0 (rank 0), 1 (average), 2 (min) or 3 (max)");
    p->average = static_cast<int>(i);
  } else if (name == "blocking") {
    if (!ParseInt(v, 0, 1, &i)) return Bad(o, v, "0 or 1");
    p->blocking = static_cast<int>(i);
  } else if (name == "barrier") {
    if (!ParseInt(v, 0, 1, &i)) return Bad(o, v, "0 or 1");
    p->barrier = i == 1;
  } else if (name == "timeout") {
    double t = 0;
    if (!ParseDouble(v, &t)) return Bad(o, v, "seconds >= 0");
    p->timeout_s = t;
  } else if (name == "ngpus" || name == "nthreads") {
    if (!ParseInt(v, 1, 1, &i)) return Bad(o, v, "1 (one process per rank, one thread)");
  } else if (name == "cudagraph") {
    if (!ParseInt(v, 0, 1 << 30, &i)) return Bad(o, v, "a number (ignored)");
  } else if (name == "coll") {
    if (!ParseColl(v, &p->coll)) {
      std::string names;
      for (int c = 0; c < kNumColls; ++c) names += std::string(c ? ", " : "") + CollName(static_cast<Coll>(c));
      return Bad(o, v, "one of " + names);
    }
  } else if (name == "algo") {
    p->algo = v;
  } else if (name == "debug-corrupt-rank") {
    if (!ParseInt(v, -1, 1 << 30, &i)) return Bad(o, v, "a rank");
    p->debug_corrupt_rank = static_cast<int>(i);
  } else if (name == "help") {
    p->help = true;
  }
  return OkStatus();
}

}  // namespace

bool ParseBytes(const std::string& text, size_t* out) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(text.c_str(), &end, 10);
  if (errno != 0) return false;
  std::string unit(end);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (unit.size() > 1) return false;
  int shift = 0;
  if (unit.size() == 1) {
    switch (unit[0]) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      case 'T': case 't': shift = 40; break;
      default: return false;
    }
  }
  if (shift > 0 && v > (~0ull >> shift)) return false;
  *out = static_cast<size_t>(v << shift);
  return true;
}

const char* AverageName(int average) {
  switch (average) {
    case 0: return "rank 0";
    case 1: return "average";
    case 2: return "min";
    case 3: return "max";
  }
  return "?";
}

Result<PerfOptions> ParsePerfArgs(int argc, const char* const* argv) {
  PerfOptions p;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    const OptSpec* o = nullptr;
    std::string value;
    bool have_value = false;
    if (arg.size() > 2 && arg[0] == '-' && arg[1] == '-') {
      std::string name = arg.substr(2);
      size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        have_value = true;
      }
      o = FindLong(name);
      if (o == nullptr)
        return InvalidArgument("unknown option '" + arg + "' (-h lists the options)");
      if (!o->has_value && have_value) return InvalidArgument("option --" + name + " takes no value");
    } else if (arg.size() >= 2 && arg[0] == '-') {
      o = FindShort(arg[1]);
      if (o == nullptr) return InvalidArgument("unknown option '" + arg + "' (-h lists the options)");
      if (arg.size() > 2) {
        if (!o->has_value) return InvalidArgument("unknown option '" + arg + "' (-h lists the options)");
        value = arg.substr(2);
        have_value = true;
      }
    } else {
      return InvalidArgument("unexpected argument '" + arg + "' (-h lists the options)");
    }
    if (o->has_value && !have_value) {
      if (k + 1 >= argc) return InvalidArgument("option " + Spelling(*o) + " needs a value");
      value = argv[++k];
    }
    if (Status st = Apply(*o, value, &p); !st.ok()) return st;  // no breadcrumb: for the user
  }
  if (p.help) return p;
  if (p.min_bytes > p.max_bytes)
    return InvalidArgument("-b (" + std::to_string(p.min_bytes) + ") is larger than -e (" +
                           std::to_string(p.max_bytes) + ")");
  if (p.step_factor <= 1 && p.step_bytes == 0)
    return InvalidArgument("-i must be > 0 when -f is 1 (the sweep would not advance)");
  if (!CollReduces(p.coll) && p.ops.size() > 1) p.ops.resize(1);  // -o is meaningless here
  return p;
}

std::string PerfUsage(const char* prog) {
  std::string s = std::string("usage: ") + prog + " [options]   (one process per rank, e.g. under tuttirun -n 4)\n";
  s +=
      "  -b, --minbytes <size>      smallest size (default 32M); sizes take K, M, G suffixes (x1024)\n"
      "  -e, --maxbytes <size>      largest size (default 32M)\n"
      "  -f, --stepfactor <n>       multiply the size by n between rows (default 1: add -i)\n"
      "  -i, --stepbytes <size>     add this to the size between rows when -f is 1 (default 1M)\n"
      "  -n, --iters <n>            timed iterations per row (default 20)\n"
      "  -w, --warmup_iters <n>     untimed iterations before each timing (default 5)\n"
      "  -c, --check <0|1>          check every result (default 1)\n"
      "  -d, --datatype <type|all>  int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double\n"
      "                             fp8_e4m3 fp8_e5m2 (default float)\n"
      "  -o, --op <op|all>          sum prod min max avg premul_sum band bor bxor (default sum)\n"
      "  -r, --root <rank>          root of broadcast, reduce, scatter, gather (default 0)\n"
      "  -a, --average <0..3>       time reported: 0 rank 0's, 1 average over ranks (default), 2 min, 3 max\n"
      "  -z, --blocking <0|1>       accepted for nccl-tests compatibility; every call is blocking\n"
      "  -T, --timeout <seconds>    fail an operation that takes longer (default: the library's)\n"
      "  -g, -t <1>, -G <n>         accepted for nccl-tests compatibility (one rank per process)\n"
      "  --coll <name>              all_reduce (default), all_gather, reduce_scatter, broadcast, reduce,\n"
      "                             scatter, gather, all_to_all, send_recv\n"
      "  --algo <name>              algorithm of the collective (default: the library chooses)\n"
      "  --barrier <0|1>            1: a barrier before every timed call, each call timed alone (the\n"
      "                             latency of a call whose ranks arrive together); 0: the calls back\n"
      "                             to back, timed together (default, as nccl-tests)\n"
      "  -h, --help                 this text\n"
      "Size S is the bytes of the operation (the whole array for all_gather, reduce_scatter, gather,\n"
      "scatter, all_to_all); algbw = S / time, busbw = algbw x factor (all_reduce 2(n-1)/n; all_gather,\n"
      "reduce_scatter, all_to_all, gather, scatter (n-1)/n; broadcast, reduce, send_recv 1).\n"
      "The exit status is non-zero when any result element is wrong.\n";
  return s;
}

}  // namespace tutti::perf
