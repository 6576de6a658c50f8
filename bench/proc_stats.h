// What this process holds, from /proc/self: status fields (VmRSS, VmHWM, Threads) and open file
// descriptors. For the soak benchmark and the RSS regression test.
#pragma once

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tutti {

// A numeric field of /proc/self/status, e.g. "VmRSS:" (kB) or "Threads:"; -1 if absent.
inline long ProcStatusField(const char* key) {
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  const size_t n = strlen(key);
  while (fgets(line, sizeof(line), f))
    if (!strncmp(line, key, n)) v = atol(line + n);
  fclose(f);
  return v;
}

// Open file descriptors of this process; -1 if /proc is not there.
inline long ProcOpenFds() {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  long n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n - 1;  // the directory's own fd
}

}  // namespace tutti
