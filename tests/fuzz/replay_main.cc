// A main() for fuzz targets built without libFuzzer (GCC, `bazel test`): runs every seed file,
// then a fixed number of deterministic pseudo-random mutations of them, through
// LLVMFuzzerTestOneInput. Same seeds and flags => same inputs, so a failure reproduces.
//
//   <target> [--mutations=N] [--seed=S] [--max_len=N] PATH...   (PATH: a file or a folder)
//
// If an input crashes (an invariant abort, a signal), it is written to crash-<target>.bin in
// $TEST_UNDECLARED_OUTPUTS_DIR (or the current folder) before the process dies.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

// The input being run, for the crash handler.
const std::string* g_current = nullptr;
char g_crash_path[4096];

void OnCrash(int sig) {
  if (g_current != nullptr) {
    int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ssize_t w = write(fd, g_current->data(), g_current->size());
      (void)w;
      close(fd);
      const char msg[] = "replay: the crashing input was written to ";
      w = write(2, msg, sizeof(msg) - 1);
      w = write(2, g_crash_path, strlen(g_crash_path));
      w = write(2, "\n", 1);
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// xorshift64*: small, fast and the same everywhere.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1DULL;
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }
};

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

// Regular files under path (a file itself, or a folder's files in name order).
void CollectSeeds(const std::string& path, std::vector<std::string>* seeds) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "replay: cannot open %s\n", path.c_str());
    std::exit(2);
  }
  if (!S_ISDIR(st.st_mode)) {
    std::string s;
    if (!ReadFile(path, &s)) std::exit(2);
    seeds->push_back(std::move(s));
    return;
  }
  std::vector<std::string> names;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(path + "/" + e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) CollectSeeds(n, seeds);
}

// Values that often sit on a parser's boundaries.
constexpr uint64_t kInteresting[] = {0,          1,          2,          7,
                                     8,          0x7f,       0x80,       0xff,
                                     0x100,      0x7fff,     0x8000,     0xffff,
                                     0x10000,    0x7fffffff, 0x80000000, 0xffffffff,
                                     1ull << 32, 1ull << 40, ~0ull >> 1, ~0ull};
constexpr char kTokens[][4] = {"0", "9", "-", ",", "[", "]", ":", "\n", "=", "^", "(x", ")", "e", "."};

void Mutate(Rng& rng, const std::vector<std::string>& seeds, size_t max_len, std::string* s) {
  int ops = 1 + static_cast<int>(rng.Below(4));
  for (int k = 0; k < ops; ++k) {
    size_t n = s->size();
    switch (rng.Below(9)) {
      case 0:  // flip a bit
        if (n) (*s)[rng.Below(n)] ^= static_cast<char>(1 << rng.Below(8));
        break;
      case 1:  // a random byte
        if (n) (*s)[rng.Below(n)] = static_cast<char>(rng.Next());
        break;
      case 2: {  // an interesting little-endian value of 1, 2, 4 or 8 bytes
        size_t w = size_t{1} << rng.Below(4);
        uint64_t v = kInteresting[rng.Below(sizeof(kInteresting) / sizeof(kInteresting[0]))];
        if (rng.Below(2)) v = ~v + 1;
        if (n >= w) {
          size_t at = rng.Below(n - w + 1);
          for (size_t i = 0; i < w; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
        }
        break;
      }
      case 3:  // insert random bytes
        s->insert(rng.Below(n + 1), std::string(1 + rng.Below(8), static_cast<char>(rng.Next())));
        break;
      case 4:  // erase a range
        if (n) {
          size_t at = rng.Below(n);
          s->erase(at, 1 + rng.Below(std::min<size_t>(16, n - at)));
        }
        break;
      case 5:  // duplicate a range
        if (n) {
          size_t at = rng.Below(n);
          std::string piece = s->substr(at, 1 + rng.Below(std::min<size_t>(32, n - at)));
          s->insert(rng.Below(n + 1), piece);
        }
        break;
      case 6: {  // splice in part of another seed
        const std::string& o = seeds[rng.Below(seeds.size())];
        if (!o.empty()) {
          size_t at = rng.Below(o.size());
          std::string piece = o.substr(at, 1 + rng.Below(o.size() - at));
          size_t to = rng.Below(n + 1);
          if (rng.Below(2)) s->replace(to, std::min(piece.size(), n - to), piece);
          else s->insert(to, piece);
        }
        break;
      }
      case 7:  // a token that text parsers care about
        s->insert(rng.Below(n + 1), kTokens[rng.Below(sizeof(kTokens) / sizeof(kTokens[0]))]);
        break;
      case 8:  // truncate
        if (n) s->resize(rng.Below(n));
        break;
    }
  }
  if (s->size() > max_len) s->resize(max_len);
}

void Run(const std::string& input) {
  g_current = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  g_current = nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  long long mutations = 20000;
  uint64_t seed = 1;
  size_t max_len = 4096;
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--mutations=", 0) == 0) mutations = std::atoll(a.c_str() + 12);
    else if (a.rfind("--seed=", 0) == 0) seed = std::strtoull(a.c_str() + 7, nullptr, 10);
    else if (a.rfind("--max_len=", 0) == 0) max_len = std::strtoull(a.c_str() + 10, nullptr, 10);
    else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "replay: unknown flag %s\n", a.c_str());
      return 2;
    } else CollectSeeds(a, &seeds);
  }
  const char* out_dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const char* base = std::strrchr(argv[0], '/');
  std::snprintf(g_crash_path, sizeof(g_crash_path), "%s/crash-%s.bin", out_dir ? out_dir : ".",
                base ? base + 1 : argv[0]);
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, OnCrash);

  auto start = std::chrono::steady_clock::now();
  if (seeds.empty()) seeds.emplace_back();
  for (const std::string& s : seeds) {
    max_len = std::max(max_len, s.size());
    Run(s);
  }
  Rng rng{seed * 0x9E3779B97F4A7C15ULL + 1};
  std::string prev = seeds[0];
  for (long long i = 0; i < mutations; ++i) {
    // Mostly a fresh seed; sometimes keep mutating the last input to go deeper.
    std::string in = rng.Below(4) == 0 ? prev : seeds[rng.Below(seeds.size())];
    Mutate(rng, seeds, max_len, &in);
    Run(in);
    prev = std::move(in);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("replay: %zu seeds and %lld mutations passed in %.2f s\n", seeds.size(), mutations,
              secs);
  return 0;
}
