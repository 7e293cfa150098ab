// Sustained runs (harness --energy SECONDS): each kernel launched back to back for SECONDS, without L2 flushes, in
// the order rung, cuBLAS, rung, cuBLAS, with NVML's energy counter read before and after each run. This is the
// regime where the power limit sets the clock, so it reports what a figure costs: joules per GEMM, mean watts and
// the SM clock NVML saw, beside the sustained TFLOP/s.
#pragma once
#include "nvml_dl.cuh"

struct SustainedRun {
  double ms_per_gemm = 0, joules_per_gemm = -1, watts = -1;
  unsigned sm_clock_mhz = 0;
  bool throttled = false;
  int gemms = 0;
};

// Launches `launch()` n times (n from `ms_estimate` so that the run lasts `seconds`) and measures the run.
// Post: ms_per_gemm from device events over the whole run; joules and watts are -1 without NVML's energy counter.
template <class F>
SustainedRun sustained_run(Nvml& nvml, cudaStream_t st, double seconds, double ms_estimate, F&& launch) {
  SustainedRun r;
  r.gemms = std::max(10, int(seconds * 1000.0 / std::max(ms_estimate, 1e-3)));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaStreamSynchronize(st);
  nvml.begin();
  const double mj0 = nvml.energy_mj();
  cudaEventRecord(e0, st);
  for (int i = 0; i < r.gemms; ++i) launch();
  cudaEventRecord(e1, st);
  nvml.sample_until_idle(st);
  cudaStreamSynchronize(st);
  const double mj1 = nvml.energy_mj();
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  r.ms_per_gemm = ms / r.gemms;
  if (mj0 >= 0 && mj1 >= mj0) {
    r.joules_per_gemm = (mj1 - mj0) / 1000.0 / r.gemms;
    r.watts = (mj1 - mj0) / ms;  // mJ / ms = W (the host-side span is a little longer than the events')
  }
  r.sm_clock_mhz = nvml.median_sm_clock();
  r.throttled = nvml.throttled();
  return r;
}

// "sustained": {...}, with a trailing ", ": two runs of each, and the rung's sustained speed as a % of cuBLAS's.
inline std::string sustained_json(double seconds, double flop, const SustainedRun (&mine)[2],
                                  const SustainedRun (&theirs)[2]) {
  auto one = [&](const SustainedRun& s) {
    char b[320];
    snprintf(b, sizeof b,
             "{\"gemms\": %d, \"ms_per_gemm\": %.5f, \"tflops\": %.2f, \"joules_per_gemm\": %.4f, \"watts\": %.1f, "
             "\"sm_clock_mhz\": %u, \"throttled\": %s}",
             s.gemms, s.ms_per_gemm, flop / s.ms_per_gemm * 1e-9, s.joules_per_gemm, s.watts, s.sm_clock_mhz,
             s.throttled ? "true" : "false");
    return std::string(b);
  };
  const double ms = 0.5 * (mine[0].ms_per_gemm + mine[1].ms_per_gemm);
  const double cms = 0.5 * (theirs[0].ms_per_gemm + theirs[1].ms_per_gemm);
  char b[160];
  snprintf(b, sizeof b, "], \"pct_of_cublas\": %.1f}, ", 100.0 * cms / ms);
  char head[96];
  snprintf(head, sizeof head, "\"sustained\": {\"seconds\": %.2f, \"l2_flush\": false, \"rung\": [", seconds);
  return head + one(mine[0]) + ", " + one(mine[1]) + "], \"cublas\": [" + one(theirs[0]) + ", " + one(theirs[1]) + b;
}
