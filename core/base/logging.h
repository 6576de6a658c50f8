// Logging controlled by TUTTI_DEBUG / TUTTI_DEBUG_SUBSYS / TUTTI_DEBUG_FILE.
//
// TUTTI_LOG(Info, Net, "connected to rank %d", peer) costs one relaxed load and a branch when
// the level or subsystem is off: the arguments are not evaluated.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace tutti {

enum class LogLevel : int { kError = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

enum LogSubsys : uint32_t {
  kLogInit = 1u << 0,
  kLogP2P = 1u << 1,
  kLogNet = 1u << 2,
  kLogShm = 1u << 3,
  kLogStore = 1u << 4,
  kLogLaunch = 1u << 5,
  kLogEnv = 1u << 6,
  kLogColl = 1u << 7,
  kLogAll = 0xffffffffu,
};

namespace log_internal {
// Bit i set: level i enabled for the subsystems in g_subsys. Set up lazily on first use.
extern std::atomic<int> g_level;  // -1: not yet initialised
extern std::atomic<uint32_t> g_subsys;
int InitFromEnv();
void Write(LogLevel level, uint32_t subsys, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
}  // namespace log_internal

inline bool LogEnabled(LogLevel level, uint32_t subsys) {
  int l = log_internal::g_level.load(std::memory_order_relaxed);
  if (__builtin_expect(l < 0, 0)) l = log_internal::InitFromEnv();
  return static_cast<int>(level) <= l &&
         (level == LogLevel::kError ||
          (log_internal::g_subsys.load(std::memory_order_relaxed) & subsys) != 0);
}

// Re-reads the environment (tests change it between cases).
void ReloadLogConfig();
// The rank printed in this thread's log lines (-1: none). Threads-as-ranks tests set it per thread.
void SetLogRank(int rank);
// Parses "INIT,NET" / "^SHM" into a mask; unknown names are ignored with a warning.
uint32_t ParseSubsysList(const std::string& text);

}  // namespace tutti

#define TUTTI_LOG(level, subsys, ...)                                                          \
  do {                                                                                         \
    if (::tutti::LogEnabled(::tutti::LogLevel::k##level, ::tutti::kLog##subsys))               \
      ::tutti::log_internal::Write(::tutti::LogLevel::k##level, ::tutti::kLog##subsys, __FILE__, \
                                   __LINE__, __VA_ARGS__);                                     \
  } while (0)
