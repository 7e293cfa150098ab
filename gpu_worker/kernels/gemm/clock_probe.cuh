// The SM clock a kernel really ran at: one thread per CTA stamps clock64() and %globaltimer at the CTA's start and
// end, and the host turns the last launch's stamps into GHz (cycles per ns). NVML's samples, a few ms apart, miss
// the drops that the power management makes inside a single launch of a few hundred microseconds.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "ptx.cuh"

constexpr int kClockProbeCtas = 1024;
__device__ unsigned long long g_clock_probe[4 * kClockProbeCtas];

// Stamp this CTA's start (end = false) or end (end = true); call from one thread of the CTA.
GEMM_DEV void clock_probe_stamp(bool end) {
  if (blockIdx.x >= kClockProbeCtas) return;
  unsigned long long* e = g_clock_probe + 4 * blockIdx.x + (end ? 2 : 0);
  e[0] = clock64();
  e[1] = globaltimer_ns();
}

// "in_kernel_clock": {...}, with a trailing ", ", for the first `ctas` CTAs of the last launch: the median, min and
// max GHz over the CTAs and the span from the first start to the last end (us); "" without stamps.
inline std::string clock_probe_json(int ctas) {
  std::vector<unsigned long long> c(4 * kClockProbeCtas);
  if (cudaMemcpyFromSymbol(c.data(), g_clock_probe, c.size() * sizeof(unsigned long long)) != cudaSuccess) return "";
  std::vector<double> ghz;
  unsigned long long t0 = ~0ull, t1 = 0;
  for (int b = 0; b < std::min(ctas, kClockProbeCtas); ++b) {
    const unsigned long long* e = &c[4 * b];
    if (e[3] > e[1] && e[2] > e[0]) {
      ghz.push_back(double(e[2] - e[0]) / double(e[3] - e[1]));
      t0 = std::min(t0, e[1]);
      t1 = std::max(t1, e[3]);
    }
  }
  if (ghz.empty()) return "";
  std::sort(ghz.begin(), ghz.end());
  char b[200];
  snprintf(b, sizeof b,
           "\"in_kernel_clock\": {\"ctas\": %zu, \"ghz_median\": %.3f, \"ghz_min\": %.3f, \"ghz_max\": %.3f, "
           "\"span_us\": %.1f}, ",
           ghz.size(), ghz[ghz.size() / 2], ghz.front(), ghz.back(), (t1 - t0) * 1e-3);
  return b;
}
