// The launch plan shared by rungs that need nothing beyond the three pointers and the sizes.
#pragma once
#include <cuda_bf16.h>

struct SimplePlan {
  const __nv_bfloat16* A;
  const __nv_bfloat16* B;
  __nv_bfloat16* C;
  int M, N, K;
};
