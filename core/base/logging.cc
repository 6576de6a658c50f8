#include "core/base/logging.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

#include "core/base/env.h"

namespace tutti {
namespace log_internal {

std::atomic<int> g_level{-1};
std::atomic<uint32_t> g_subsys{kLogAll};

namespace {
std::mutex g_mu;
FILE* g_out = nullptr;  // guarded by g_mu
thread_local int t_rank = -1;

struct SubsysName {
  const char* name;
  uint32_t bit;
};
constexpr SubsysName kNames[] = {
    {"INIT", kLogInit}, {"P2P", kLogP2P},       {"NET", kLogNet}, {"SHM", kLogShm},
    {"STORE", kLogStore}, {"LAUNCH", kLogLaunch}, {"ENV", kLogEnv}, {"COLL", kLogColl},
    {"ALL", kLogAll},
};

const char* SubsysLabel(uint32_t bit) {
  for (const auto& n : kNames)
    if (n.bit == bit) return n.name;
  return "?";
}

std::string ExpandPath(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[++i];
      if (c == 'p') {
        out += std::to_string(getpid());
        continue;
      }
      if (c == 'h') {
        char host[256] = {};
        gethostname(host, sizeof(host) - 1);
        out += host;
        continue;
      }
      out += '%';
    }
    out += pattern[i];
  }
  return out;
}
}  // namespace

int InitFromEnv() {
  std::lock_guard<std::mutex> lock(g_mu);
  int level = 0;
  std::string lv = EnvRaw("TUTTI_DEBUG").value_or("");
  for (auto& c : lv) c = static_cast<char>(toupper(c));
  if (lv == "WARN") level = 1;
  if (lv == "INFO") level = 2;
  if (lv == "TRACE") level = 3;
  g_subsys.store(ParseSubsysList(EnvRaw("TUTTI_DEBUG_SUBSYS").value_or("ALL")));
  if (g_out != nullptr && g_out != stderr) fclose(g_out);
  g_out = stderr;
  if (auto path = EnvRaw("TUTTI_DEBUG_FILE")) {
    FILE* f = fopen(ExpandPath(*path).c_str(), "a");
    if (f != nullptr) {
      setvbuf(f, nullptr, _IOLBF, 0);
      g_out = f;
    }
  }
  g_level.store(level);
  return level;
}

void Write(LogLevel level, uint32_t subsys, const char* file, int line, const char* fmt, ...) {
  static const char* kLevel[] = {"ERROR", "WARN", "INFO", "TRACE"};
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  char host[64] = {};
  gethostname(host, sizeof(host) - 1);
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const char* base = strrchr(file, '/');
  char rank[24] = "";
  if (t_rank >= 0) snprintf(rank, sizeof(rank), " [%d]", t_rank);
  std::lock_guard<std::mutex> lock(g_mu);
  FILE* out = g_out ? g_out : stderr;
  fprintf(out, "%s:%d:%ld%s %ld.%06ld TUTTI %s %s %s:%d %s\n", host, getpid(),
          static_cast<long>(syscall(SYS_gettid)), rank, static_cast<long>(ts.tv_sec),
          static_cast<long>(ts.tv_nsec / 1000), kLevel[static_cast<int>(level)],
          SubsysLabel(subsys), base ? base + 1 : file, line, msg);
}

void SetRank(int r) { t_rank = r; }

}  // namespace log_internal

void ReloadLogConfig() { log_internal::InitFromEnv(); }
void SetLogRank(int rank) { log_internal::SetRank(rank); }

uint32_t ParseSubsysList(const std::string& text) {
  std::string s = text;
  bool exclude = !s.empty() && s[0] == '^';
  if (exclude) s = s.substr(1);
  uint32_t mask = 0;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    for (auto& c : item) c = static_cast<char>(toupper(c));
    for (const auto& n : log_internal::kNames)
      if (item == n.name) mask |= n.bit;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return exclude ? ~mask : mask;
}

}  // namespace tutti
