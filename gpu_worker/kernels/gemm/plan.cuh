// The launch plan shared by rungs that need nothing beyond the three pointers and the sizes, and the host side of
// such a rung.
#pragma once
#include <cuda_bf16.h>

#include "harness.cuh"

struct SimplePlan {
  const __nv_bfloat16* A;
  const __nv_bfloat16* B;
  __nv_bfloat16* C;
  int M, N, K;
};

// setup / prepare / launch / release for a rung R whose kernel takes (A, B, C, M, N, K) on an (N/BN, M/BM) grid of
// R::threads threads with R::smem_bytes() of dynamic shared memory. R provides kernel, BM, BN, threads and
// smem_bytes(); a rung with another grid defines its own launch.
template <class R>
struct SimpleLaunch {
  using Plan = SimplePlan;
  static void setup() {
    GEMM_CHECK(cudaFuncSetAttribute(R::kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, R::smem_bytes()));
  }
  static Plan prepare(const bf16* A, const bf16* B, bf16* C, int M, int N, int K) { return {A, B, C, M, N, K}; }
  static void launch(const Plan& p, cudaStream_t st) {
    R::kernel<<<dim3(p.N / R::BN, p.M / R::BM), R::threads, R::smem_bytes(), st>>>(p.A, p.B, p.C, p.M, p.N, p.K);
  }
  static void release(Plan&) {}
};
