// The correctness side of the GEMM harness: input distributions, the device-side comparison against the fp32
// reference, and the CPU spot check of that reference in double. Included by harness.cuh after elem_t, GEMM_CHECK and
// gemm_fatal.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

// ------------------------------------------------------------------------------------------- device helpers
__device__ __forceinline__ uint32_t gemm_hash(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

// Input distributions (power draw depends on the data): 0 uniform in [-1, 1), 1 standard normal (Box-Muller),
// 2 zeros; each value rounded to the element type.
enum GemmDist { kUniform = 0, kNormal = 1, kZeros = 2 };
static const char* const kDistNames[] = {"uniform", "normal", "zeros"};
__global__ void gemm_fill_random(elem_t* p, size_t n, uint64_t seed, int dist = kUniform) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint64_t h = seed * 0x9E3779B97F4A7C15ULL + i;
    const float u = (gemm_hash(h) >> 9) * (1.0f / 8388608.0f);  // 23 bits: [0, 1)
    float v = 2.0f * u - 1.0f;
    if (dist == kNormal) {
      const float u2 = ((gemm_hash(h ^ 0xD1B54A32D192ED03ULL) >> 9) + 1) * (1.0f / 8388608.0f);  // (0, 1]
      v = sqrtf(-2.0f * logf(u2)) * cospif(2.0f * u);
    } else if (dist == kZeros) {
      v = 0.0f;
    }
    p[i] = elem_from_float(v);
  }
}

// acc[0] += sum (out - ref)^2, acc[1] += sum ref^2, acc[2] += count of non-finite outputs.
__global__ void gemm_compare(const elem_t* out, const float* ref, size_t n, double* acc) {
  double d2 = 0, r2 = 0, bad = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float o = elem_to_float(out[i]), r = ref[i];
    if (!isfinite(o)) { bad += 1; continue; }
    d2 += double(o - r) * double(o - r);
    r2 += double(r) * double(r);
  }
  for (int s = 16; s > 0; s >>= 1) {
    d2 += __shfl_down_sync(0xffffffffu, d2, s);
    r2 += __shfl_down_sync(0xffffffffu, r2, s);
    bad += __shfl_down_sync(0xffffffffu, bad, s);
  }
  if ((threadIdx.x & 31) == 0) { atomicAdd(acc, d2); atomicAdd(acc + 1, r2); atomicAdd(acc + 2, bad); }
}

struct Checker {
  double* acc = nullptr;
  Checker() { GEMM_CHECK(cudaMalloc(&acc, 3 * sizeof(double))); }
  ~Checker() { cudaFree(acc); }
  // Relative Frobenius error of out against ref; NaN when any output is non-finite (poison left unwritten). A zero
  // reference (zero inputs) gives 0 when the output is exactly zero, else NaN.
  double rel(const elem_t* out, const float* ref, size_t n) {
    GEMM_CHECK(cudaMemset(acc, 0, 3 * sizeof(double)));
    gemm_compare<<<1024, 256>>>(out, ref, n, acc);
    GEMM_CHECK(cudaGetLastError());
    double h[3];
    GEMM_CHECK(cudaMemcpy(h, acc, sizeof h, cudaMemcpyDeviceToHost));
    if (h[2] > 0) return NAN;
    if (!(h[1] > 0)) return h[0] == 0 ? 0.0 : NAN;
    return std::sqrt(h[0] / h[1]);
  }
};

// Spot-check the cuBLAS fp32 reference in double on the CPU at `samples` random entries; returns the relative error
// (0 when every sampled entry is exactly right, as for zero inputs).
static double spot_check_reference(const elem_t* A, const elem_t* B, const float* ref, int M, int N, int K,
                                   uint64_t seed, int samples = 48) {
  std::vector<elem_t> arow(K), brow(K);
  double d2 = 0, r2 = 0;
  uint64_t s = seed | 1;
  for (int t = 0; t < samples; ++t) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    int i = int(s % uint64_t(M)), j = int((s >> 24) % uint64_t(N));
    GEMM_CHECK(cudaMemcpy(arow.data(), A + size_t(i) * K, K * sizeof(elem_t), cudaMemcpyDeviceToHost));
    GEMM_CHECK(cudaMemcpy(brow.data(), B + size_t(j) * K, K * sizeof(elem_t), cudaMemcpyDeviceToHost));
    float r;
    GEMM_CHECK(cudaMemcpy(&r, ref + size_t(i) * N + j, sizeof r, cudaMemcpyDeviceToHost));
    double x = 0;
    for (int k = 0; k < K; ++k) x += double(elem_to_float(arow[k])) * double(elem_to_float(brow[k]));
    d2 += (r - x) * (r - x);
    r2 += x * x;
  }
  return d2 == 0 ? 0.0 : std::sqrt(d2 / std::max(r2, 1e-30));
}

