// The mma.sync ceiling: m16n8k16 bf16 -> fp32 throughput from registers alone (no shared or global memory in the
// loop), for 4, 8 and 16 warps per multiprocessor. Rungs 2-5 cannot beat this rate; it bounds what "% of cuBLAS"
// they can reach on this chip. Prints one JSON line. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "ptx.cuh"

#define PEAK_CHECK(x)                                                                      \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      printf("{\"ok\": false, \"error\": \"%s: %s\"}\n", #x, cudaGetErrorString(e_));     \
      exit(2);                                                                             \
    }                                                                                      \
  } while (0)

constexpr int CHAINS = 16;  // independent accumulators per warp: enough to cover the mma latency

__global__ void mma_peak(int iters, float* out, uint32_t seed) {
  const uint32_t x = (threadIdx.x + 1) * 2654435761u ^ seed;
  uint32_t a[4] = {x | 0x3c003c00u, (x >> 3) | 0x3c003c00u, (x >> 5) | 0x38003800u, (x >> 7) | 0x38003800u};
  uint32_t b0 = (x >> 9) | 0x3c003c00u, b1 = (x >> 11) | 0x38003800u;  // non-zero bf16 pairs
  float acc[CHAINS][4] = {};
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) mma_16816(acc[c], a, b0, b1);
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  if (s == 1234.5f) out[threadIdx.x] = s;  // keeps the loop alive; never true for these inputs in practice
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? atoi(argv[1]) : 20000;
  cudaDeviceProp prop;
  PEAK_CHECK(cudaGetDeviceProperties(&prop, 0));
  float* out;
  PEAK_CHECK(cudaMalloc(&out, 4096));
  cudaEvent_t e0, e1;
  PEAK_CHECK(cudaEventCreate(&e0));
  PEAK_CHECK(cudaEventCreate(&e1));
  printf("{\"ok\": true, \"device\": \"%s\", \"sms\": %d, \"iters\": %d, \"chains\": %d, \"results\": [", prop.name,
         prop.multiProcessorCount, iters, CHAINS);
  const int warps_per_sm[] = {4, 8, 16};
  for (int w = 0; w < 3; ++w) {
    const int threads = 32 * warps_per_sm[w], blocks = prop.multiProcessorCount;
    mma_peak<<<blocks, threads>>>(iters / 10, out, 1u);  // warm-up (clocks up)
    PEAK_CHECK(cudaGetLastError());
    float best = 1e30f;
    for (int rep = 0; rep < 5; ++rep) {
      PEAK_CHECK(cudaEventRecord(e0));
      mma_peak<<<blocks, threads>>>(iters, out, rep + 2u);
      PEAK_CHECK(cudaEventRecord(e1));
      PEAK_CHECK(cudaEventSynchronize(e1));
      PEAK_CHECK(cudaGetLastError());
      float ms;
      PEAK_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      best = ms < best ? ms : best;
    }
    const double flop = 2.0 * 16 * 8 * 16 * CHAINS * double(iters) * blocks * warps_per_sm[w];
    printf("%s{\"warps_per_sm\": %d, \"ms\": %.4f, \"tflops\": %.1f}", w ? ", " : "", warps_per_sm[w], best,
           flop / best * 1e-9);
  }
  printf("]}\n");
  return 0;
}
