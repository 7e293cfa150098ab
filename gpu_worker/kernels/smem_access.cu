// One warp-wide shared-memory instruction, repeated: the layout doctor's measurement kernel.
// MODE 0: ld.shared of WIDTH bytes; MODE 1: st.shared of WIDTH bytes; MODE 2: ldmatrix.x{LDM_NUM}[.trans].
// One block of one warp issues the instruction ITERS times at the 32 lane byte offsets of --table (ldmatrix: the
// first 8*LDM_NUM are the row addresses). Nsight Compute reads the wavefronts of exactly these instructions: loads
// fill the tile with plain 4-byte st.shared (no ld.shared), stores never fill and read back with ld.shared.
// Every run is checked on the host: loads by the sum each lane received, stores by every byte written.
// Usage: smem_access --table FILE --footprint BYTES [--iters N] [--lanes N] (ld/st: lanes past N idle).
// Prints one JSON object.
#include "common.cuh"
#include "smem_ops.cuh"

#ifndef MODE
#define MODE 0
#endif
#ifndef WIDTH
#define WIDTH 4
#endif
#ifndef LDM_NUM
#define LDM_NUM 4
#endif
#ifndef LDM_TRANS
#define LDM_TRANS 0
#endif

__host__ __device__ inline uint32_t byte_val(uint32_t b) { return (b * 131u + 7u) & 0xFFu; }
__host__ __device__ inline uint32_t word_of(uint32_t a, int n) {  // n bytes from address a, little-endian
  uint32_t w = 0;
  for (int i = 0; i < n; ++i) w |= byte_val(a + i) << (8 * i);
  return w;
}

__device__ __forceinline__ uint32_t access(uint32_t addr) {
#if MODE == 2
  return ldmatrix_sum<LDM_NUM, (LDM_TRANS != 0)>(addr);
#elif MODE == 0
  return ld_shared_sum<WIDTH>(addr);
#else
  return 0;
#endif
}

// The value stored at a byte offset (a lane writing an address another lane writes stores the same bytes).
__device__ __forceinline__ void store(uint32_t addr, uint32_t off) {
#if MODE == 1
#if WIDTH == 1
  asm volatile("st.shared.u8 [%0], %1;" ::"r"(addr), "h"((uint16_t)word_of(off, 1)));
#elif WIDTH == 2
  asm volatile("st.shared.u16 [%0], %1;" ::"r"(addr), "h"((uint16_t)word_of(off, 2)));
#elif WIDTH == 4
  asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(word_of(off, 4)));
#elif WIDTH == 8
  asm volatile("st.shared.v2.u32 [%0], {%1, %2};" ::"r"(addr), "r"(word_of(off, 4)), "r"(word_of(off + 4, 4)));
#else
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(word_of(off, 4)),
               "r"(word_of(off + 4, 4)), "r"(word_of(off + 8, 4)), "r"(word_of(off + 12, 4)));
#endif
#endif
}

__global__ void __launch_bounds__(32) access_kernel(const uint32_t* __restrict__ fill, int fill_words,
                                                    const uint32_t* __restrict__ table, int nlanes, int iters,
                                                    int zero, uint32_t* __restrict__ out) {
  extern __shared__ __align__(1024) uint32_t tile[];
  const int lane = threadIdx.x & 31;
#if MODE != 1
  for (int i = lane; i < fill_words; i += 32) tile[i] = fill[i];
#endif
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(tile);
  const uint32_t off = table[lane];
  __syncwarp();
  [[maybe_unused]] uint32_t acc = 0;
  for (int it = 0; it < iters; ++it) {
    const uint32_t b = base + (uint32_t)(it & zero);
#if MODE == 1
    store(b + off, off);
#else
    acc += access(b + off);
#endif
  }
  __syncwarp();
#if MODE == 1
  for (int i = lane; i < fill_words; i += 32) out[i] = tile[i];
#else
  out[lane] = acc;
#endif
}

[[maybe_unused]] static uint32_t b16_at(const std::vector<uint32_t>& m, uint32_t byte) {
  return (m[byte / 4] >> (8 * (byte & 2))) & 0xFFFFu;
}

// What lane `lane` receives from one access (the reference for loads).
[[maybe_unused]] static uint32_t expected_lane(const std::vector<uint32_t>& m, const std::vector<uint32_t>& t, int lane) {
#if MODE == 2
  uint32_t s = 0;
  for (int k = 0; k < LDM_NUM; ++k) {
#if LDM_TRANS
    uint32_t col = lane / 4, r = 2 * (lane % 4);
    s += b16_at(m, t[8 * k + r] + 2 * col) | (b16_at(m, t[8 * k + r + 1] + 2 * col) << 16);
#else
    s += m[(t[8 * k + lane / 4] + 4 * (lane % 4)) / 4];
#endif
  }
  return s;
#else
  uint32_t a = t[lane];
  if (WIDTH == 1) return (m[a / 4] >> (8 * (a & 3))) & 0xFFu;
  if (WIDTH == 2) return b16_at(m, a);
  uint32_t s = 0;
  for (int k = 0; k < WIDTH / 4; ++k) s += m[a / 4 + k];
  return s;
#endif
}

int main(int argc, char** argv) {
  const char* table_path = ll_sarg(argc, argv, "--table", nullptr);
  const long long footprint = ll_arg(argc, argv, "--footprint", 0);
  const int iters = (int)ll_arg(argc, argv, "--iters", 16);
  const uint64_t seed = (uint64_t)ll_arg(argc, argv, "--seed", 12345);
  const int zero = (int)ll_arg(argc, argv, "--zero", 0);  // always 0; read at run time on purpose
  const int nlanes = MODE == 2 ? 32 : (int)ll_arg(argc, argv, "--lanes", 32);
  if (nlanes < 1 || nlanes > 32) ll_fail("--lanes must be in [1, 32]", __LINE__);
  if (!table_path || footprint <= 0 || iters < 1) ll_fail("usage: smem_access --table FILE --footprint BYTES", __LINE__);
  std::vector<uint32_t> table;
  FILE* f = fopen(table_path, "r");
  if (!f) ll_fail(std::string("cannot open table ") + table_path, __LINE__);
  unsigned long v;
  while (fscanf(f, "%lu", &v) == 1) table.push_back((uint32_t)v);
  fclose(f);
  if (table.size() != 32) ll_fail("table must hold 32 byte offsets", __LINE__);
  const int fill_words = (int)((footprint + 15) / 16 * 4);
  const uint32_t width = MODE == 2 ? 16 : WIDTH;
  for (uint32_t off : table) {
    if (off + width > (uint32_t)fill_words * 4) ll_fail("table offset past footprint", __LINE__);
    if (off % width) ll_fail("table offset not aligned to the access width", __LINE__);
  }
  LL_CHECK(cudaSetDevice(0));
  const size_t smem_bytes = (size_t)fill_words * 4;
  LL_CHECK(cudaFuncSetAttribute(access_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes));
  uint32_t *d_fill, *d_table, *d_out;
  LL_CHECK(cudaMalloc(&d_fill, smem_bytes));
  LL_CHECK(cudaMalloc(&d_table, 32 * 4));
  LL_CHECK(cudaMalloc(&d_out, smem_bytes > 128 ? smem_bytes : 128));
  LL_CHECK(cudaMemcpy(d_table, table.data(), 32 * 4, cudaMemcpyHostToDevice));
  std::vector<uint32_t> fill(fill_words), out(fill_words > 32 ? fill_words : 32);
  LLRng rng(seed);
  for (auto& w : fill) w = rng.next();
  LL_CHECK(cudaMemcpy(d_fill, fill.data(), smem_bytes, cudaMemcpyHostToDevice));
  LL_CHECK(cudaMemset(d_out, 0xA5, out.size() * 4));
  access_kernel<<<1, 32, smem_bytes>>>(d_fill, fill_words, d_table, nlanes, iters, zero, d_out);
  ll_check_launch("access_kernel");
  LL_CHECK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
  long long mismatches = 0, checked = 0;
  std::string first_bad;
  char buf[160];
#if MODE == 1
  std::vector<int> written(fill_words * 4, 0);
  for (int lane = 0; lane < nlanes; ++lane)
    for (uint32_t i = 0; i < WIDTH; ++i) written[table[lane] + i] = 1;
  for (int b = 0; b < fill_words * 4; ++b) {
    if (!written[b]) continue;
    ++checked;
    uint32_t got = (out[b / 4] >> (8 * (b & 3))) & 0xFFu;
    if (got != byte_val(b)) {
      if (!mismatches) { snprintf(buf, sizeof buf, "byte %d: got %u, expected %u", b, got, byte_val(b)); first_bad = buf; }
      ++mismatches;
    }
  }
#else
  for (int lane = 0; lane < nlanes; ++lane) {
    ++checked;
    uint32_t want = expected_lane(fill, table, lane) * (uint32_t)iters;
    if (out[lane] != want) {
      if (!mismatches) { snprintf(buf, sizeof buf, "lane %d: got %u, expected %u", lane, out[lane], want); first_bad = buf; }
      ++mismatches;
    }
  }
#endif
  printf("{\"ok\": true, \"device\": %s, \"config\": {\"mode\": \"%s\", \"width\": %u, \"ldmatrix_num\": %d, "
         "\"trans\": %s, \"lanes\": %d, \"iters\": %d, \"smem_bytes\": %zu}, ",
         ll_device_json(0).c_str(), MODE == 0 ? "ld" : MODE == 1 ? "st" : "ldmatrix", width, LDM_NUM,
         LDM_TRANS ? "true" : "false", nlanes, iters, smem_bytes);
  printf("\"check\": {\"passed\": %s, \"checked\": %lld, \"mismatches\": %lld, \"first_mismatch\": \"%s\"}}\n",
         mismatches == 0 ? "true" : "false", checked, mismatches, ll_escape(first_bad).c_str());
  return mismatches == 0 ? 0 : 4;
}
