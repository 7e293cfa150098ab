// Shared helpers for the LayoutLab benchmark binaries: error handling that always ends in one JSON line,
// a tiny JSON writer, statistics and CUDA-event timing.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Any CUDA failure prints {"ok": false, "error": ...} on stdout and exits non-zero; the Python runner parses it.
#define LL_CHECK(call)                                                                                      \
  do {                                                                                                      \
    cudaError_t err_ = (call);                                                                              \
    if (err_ != cudaSuccess) ll_fail(std::string(#call) + ": " + cudaGetErrorString(err_), __LINE__);     \
  } while (0)

inline std::string ll_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') { o += '\\'; o += c; }
    else if (c == '\n') o += "\\n";
    else if ((unsigned char)c < 0x20) o += ' ';
    else o += c;
  }
  return o;
}

[[noreturn]] inline void ll_fail(const std::string& msg, int line) {
  printf("{\"ok\": false, \"error\": \"%s (line %d)\"}\n", ll_escape(msg).c_str(), line);
  fflush(stdout);
  exit(3);
}

inline void ll_check_launch(const char* what) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) ll_fail(std::string(what) + ": " + cudaGetErrorString(err), __LINE__);
}

// Command-line lookup: --name value (returns fallback when absent).
inline long long ll_arg(int argc, char** argv, const char* name, long long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!strcmp(argv[i], name)) return atoll(argv[i + 1]);
  return fallback;
}
inline const char* ll_sarg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!strcmp(argv[i], name)) return argv[i + 1];
  return fallback;
}
inline bool ll_flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], name)) return true;
  return false;
}

// xorshift64*: fast host-side random words, seeded per run so that every check sees fresh inputs.
struct LLRng {
  uint64_t s;
  explicit LLRng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) { if (!s) s = 1; }
  uint32_t next() {
    s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
    return (uint32_t)((s * 0x2545F4914F6CDD1Dull) >> 32);
  }
};

// One progress line on stderr ("PROGRESS <stage> <done> <total>"); the Python runner turns it into job progress.
inline void ll_progress(const char* stage, int done, int total) {
  fprintf(stderr, "PROGRESS %s %d %d\n", stage, done, total);
  fflush(stderr);
}

inline std::string ll_json_array(const std::vector<double>& v) {
  std::string o = "[";
  char buf[64];
  for (size_t i = 0; i < v.size(); ++i) {
    snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", v[i]);
    o += buf;
  }
  return o + "]";
}

inline double ll_median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline std::string ll_device_json(int dev) {
  cudaDeviceProp p;
  LL_CHECK(cudaGetDeviceProperties(&p, dev));
  int clock_khz = 0, mem_clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, dev);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  char buf[1024];
  snprintf(buf, sizeof buf,
           "{\"name\": \"%s\", \"cc\": \"%d.%d\", \"sms\": %d, \"smem_per_sm\": %zu, \"smem_per_block_optin\": %zu, "
           "\"l2_bytes\": %d, \"max_clock_mhz\": %.1f, \"mem_clock_mhz\": %.1f, \"cuda_driver\": %d, "
           "\"cuda_runtime\": %d}",
           ll_escape(p.name).c_str(), p.major, p.minor, p.multiProcessorCount, p.sharedMemPerMultiprocessor,
           p.sharedMemPerBlockOptin, p.l2CacheSize, clock_khz / 1000.0, mem_clock_khz / 1000.0, driver, runtime);
  return buf;
}
