// The wgmma ceiling: m64n256k16 bf16 -> fp32 throughput with both operands resident in shared memory (no TMA, no
// global memory in the loop), 2 warpgroups per multiprocessor issuing 4 wgmmas per commit group with one group in
// flight behind the newest, as rungs 7-8 do. Rungs 6-8 cannot beat this rate at the clocks it ran at. Prints one
// JSON line. Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a.
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

constexpr int WGS = 2, A_BYTES = 64 * 64 * 2, B_BYTES = 256 * 64 * 2;
constexpr int SMEM = WGS * A_BYTES + B_BYTES + 1024;

__global__ void __launch_bounds__(128 * WGS, 1) wgmma_peak(int iters, float* out, uint32_t seed) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
  const int t = threadIdx.x, wg = t / 128;
  unsigned char* p = smem_raw + (base - smem_u32(smem_raw));
  for (int i = t; i < (WGS * A_BYTES + B_BYTES) / 4; i += blockDim.x) {  // small non-zero bf16 pairs
    const uint32_t x = (i * 2654435761u) ^ seed;
    reinterpret_cast<uint32_t*>(p)[i] = ((x & 0x007f007fu) | 0x3c003c00u) ^ (x & 0x80008000u);
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const uint32_t a = base + wg * A_BYTES, b = base + WGS * A_BYTES;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;
  for (int it = 0; it < iters; ++it) {
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) wgmma_m64n256k16(acc, desc_k_sw128(a + ks * 32), desc_k_sw128(b + ks * 32), 1);
    wgmma_commit();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
  float s = 0;
#pragma unroll
  for (int i = 0; i < 128; ++i) s += acc[i];
  if (s == 1234.5f) out[t] = s;  // keeps the loop alive
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? atoi(argv[1]) : 4000;
  cudaDeviceProp prop;
  PEAK_CHECK(cudaGetDeviceProperties(&prop, 0));
  PEAK_CHECK(cudaFuncSetAttribute(wgmma_peak, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  float* out;
  PEAK_CHECK(cudaMalloc(&out, 4096));
  cudaEvent_t e0, e1;
  PEAK_CHECK(cudaEventCreate(&e0));
  PEAK_CHECK(cudaEventCreate(&e1));
  const int blocks = prop.multiProcessorCount;
  wgmma_peak<<<blocks, 128 * WGS, SMEM>>>(iters / 4, out, 1u);  // warm-up (clocks up)
  PEAK_CHECK(cudaGetLastError());
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    PEAK_CHECK(cudaEventRecord(e0));
    wgmma_peak<<<blocks, 128 * WGS, SMEM>>>(iters, out, rep + 2u);
    PEAK_CHECK(cudaEventRecord(e1));
    PEAK_CHECK(cudaEventSynchronize(e1));
    PEAK_CHECK(cudaGetLastError());
    float ms;
    PEAK_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    best = ms < best ? ms : best;
  }
  const double flop = 2.0 * 64 * 256 * 16 * 4 * double(iters) * WGS * blocks;
  printf("{\"ok\": true, \"device\": \"%s\", \"sms\": %d, \"iters\": %d, \"warpgroups_per_sm\": %d, "
         "\"instruction\": \"wgmma m64n256k16 bf16\", \"ms\": %.4f, \"tflops\": %.1f}\n",
         prop.name, blocks, iters, WGS, best, flop / best * 1e-9);
  return 0;
}
