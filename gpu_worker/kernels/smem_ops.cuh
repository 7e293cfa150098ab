// Shared-memory reads for the access-pattern kernels (smem.cu, smem_access.cu): one instruction each, returning the
// sum of the 32-bit words the lane received so that the compiler keeps the load.
#pragma once
#include <cstdint>

// ldmatrix.sync.aligned.m8n8.x{kNum}[.trans].shared.b16 at the lane's row address `addr`.
template <int kNum, bool kTrans>
__device__ __forceinline__ uint32_t ldmatrix_sum(uint32_t addr) {
  static_assert(kNum == 1 || kNum == 2 || kNum == 4, "ldmatrix takes 1, 2 or 4 matrices");
  uint32_t r0 = 0, r1 = 0, r2 = 0, r3 = 0;
  if constexpr (kNum == 1 && kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr));
  } else if constexpr (kNum == 1) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr));
  } else if constexpr (kNum == 2 && kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
  } else if constexpr (kNum == 2) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
  } else if constexpr (kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
  }
  return r0 + r1 + r2 + r3;
}

// ld.shared of kBytes bytes (1, 2, 4, 8 or 16) at `addr`.
template <int kBytes>
__device__ __forceinline__ uint32_t ld_shared_sum(uint32_t addr) {
  static_assert(kBytes == 1 || kBytes == 2 || kBytes == 4 || kBytes == 8 || kBytes == 16,
                "an access is 1, 2, 4, 8 or 16 bytes");
  if constexpr (kBytes == 1) {
    uint16_t v;
    asm volatile("ld.shared.u8 %0, [%1];" : "=h"(v) : "r"(addr));
    return v;
  } else if constexpr (kBytes == 2) {
    uint16_t v;
    asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(addr));
    return v;
  } else if constexpr (kBytes == 4) {
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr));
    return v;
  } else if constexpr (kBytes == 8) {
    uint32_t a, b;
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr));
    return a + b;
  } else {
    uint32_t a, b, c, d;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr));
    return a + b + c + d;
  }
}
