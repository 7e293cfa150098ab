// The smallest template: one kernel that writes its thread index. Used by the compile-only job kind.
#include "common.cuh"

#ifndef VALUE
#define VALUE 1
#endif

__global__ void noop_kernel(int* out) { out[threadIdx.x] = (int)threadIdx.x * VALUE; }

int main() {
  int* d = nullptr;
  LL_CHECK(cudaMalloc(&d, 32 * sizeof(int)));
  noop_kernel<<<1, 32>>>(d);
  ll_check_launch("noop_kernel");
  int h[32];
  LL_CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < 32; ++i) bad += h[i] != i * VALUE;
  printf("{\"ok\": true, \"check\": {\"passed\": %s, \"mismatches\": %d}}\n", bad ? "false" : "true", bad);
  return bad ? 4 : 0;
}
