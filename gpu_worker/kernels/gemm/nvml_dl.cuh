// NVML loaded at run time (dlopen libnvidia-ml.so.1): the SM clock, power, temperature and clock-event (throttle)
// reasons, sampled while timed work runs, so every figure carries the clocks it ran at. Without NVML every call is a
// no-op and json() says why. Declarations follow nvml.h.
#pragma once
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

class Nvml {
  using Dev = void*;
  using InitFn = int (*)();
  using ByPciFn = int (*)(const char*, Dev*);
  using ClockFn = int (*)(Dev, int, unsigned*);
  using PowerFn = int (*)(Dev, unsigned*);
  using TempFn = int (*)(Dev, int, unsigned*);
  using ReasonsFn = int (*)(Dev, unsigned long long*);
  using EnergyFn = int (*)(Dev, unsigned long long*);
  static constexpr int kClockSm = 1, kTempGpu = 0;
  // Clock-event reasons that mean the clock was held below what the load asked for (nvml.h's bits).
  static constexpr unsigned long long kSwPowerCap = 0x4, kHwSlowdown = 0x8, kSwThermal = 0x20, kHwThermal = 0x40,
                                      kHwPowerBrake = 0x80, kThrottleMask = kSwPowerCap | kHwSlowdown | kSwThermal |
                                                                            kHwThermal | kHwPowerBrake;
  Dev dev_ = nullptr;
  ClockFn clock_ = nullptr;
  PowerFn power_ = nullptr;
  TempFn temp_ = nullptr;
  ReasonsFn reasons_ = nullptr;
  EnergyFn energy_ = nullptr;
  std::string status_ = "not loaded";
  std::vector<unsigned> sm_, mw_, temp_c_;
  unsigned long long mask_ = 0;
  int throttled_samples_ = 0;

  void sample() {
    unsigned v = 0;
    unsigned long long r = 0;
    if (clock_(dev_, kClockSm, &v) == 0) sm_.push_back(v);
    if (power_(dev_, &v) == 0) mw_.push_back(v);
    if (temp_(dev_, kTempGpu, &v) == 0) temp_c_.push_back(v);
    if (reasons_ && reasons_(dev_, &r) == 0) {
      mask_ |= r;
      throttled_samples_ += (r & kThrottleMask) != 0;
    }
  }

 public:
  // Opens NVML on the GPU that CUDA calls `cuda_device` (matched by PCI bus id).
  void load(int cuda_device) {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib) { status_ = "libnvidia-ml.so.1 not found"; return; }
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
    auto by_pci = reinterpret_cast<ByPciFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock_ = reinterpret_cast<ClockFn>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    power_ = reinterpret_cast<PowerFn>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    temp_ = reinterpret_cast<TempFn>(dlsym(lib, "nvmlDeviceGetTemperature"));
    reasons_ = reinterpret_cast<ReasonsFn>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!reasons_) reasons_ = reinterpret_cast<ReasonsFn>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    energy_ = reinterpret_cast<EnergyFn>(dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
    char pci[32] = {0};
    if (!init || !by_pci || !clock_ || !power_ || !temp_) { status_ = "NVML lacks a needed symbol"; return; }
    if (int e = init()) { status_ = "nvmlInit failed (" + std::to_string(e) + ")"; return; }
    if (cudaDeviceGetPCIBusId(pci, sizeof pci, cuda_device) != cudaSuccess || by_pci(pci, &dev_) != 0) {
      dev_ = nullptr;
      status_ = "no NVML device for CUDA device " + std::to_string(cuda_device);
      return;
    }
    status_ = "ok";
  }
  const char* status() const { return status_.c_str(); }
  // The GPU's energy counter in millijoules since the driver loaded; -1 where NVML or the counter is missing.
  double energy_mj() const {
    unsigned long long mj = 0;
    return dev_ && energy_ && energy_(dev_, &mj) == 0 ? double(mj) : -1.0;
  }
  // The median SM clock (MHz) of the samples since begin(); 0 without samples.
  unsigned median_sm_clock() const {
    if (sm_.empty()) return 0;
    std::vector<unsigned> s = sm_;
    std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
    return s[s.size() / 2];
  }
  bool throttled() const { return (mask_ & kThrottleMask) != 0; }
  void begin() {
    sm_.clear(); mw_.clear(); temp_c_.clear();
    mask_ = 0;
    throttled_samples_ = 0;
  }
  // Samples every ~2 ms until the stream's queued work has finished (at least one sample).
  void sample_until_idle(cudaStream_t st) {
    if (!dev_) return;
    do {
      sample();
      usleep(2000);
    } while (cudaStreamQuery(st) == cudaErrorNotReady);
  }
  // "nvml": {...}, with a trailing ", ": samples, SM clock min / median / max (MHz), power max / mean (W, NVML's
  // averaged reading), max temperature, the OR of the clock-event reasons, and whether any sample was throttled.
  std::string json() const {
    if (!dev_ || sm_.empty()) return "\"nvml\": {\"available\": false, \"reason\": \"" + status_ + "\"}, ";
    std::vector<unsigned> s = sm_;
    std::sort(s.begin(), s.end());
    double pmax = 0, psum = 0;
    for (unsigned m : mw_) { pmax = std::max(pmax, m / 1000.0); psum += m / 1000.0; }
    const unsigned tmax = temp_c_.empty() ? 0 : *std::max_element(temp_c_.begin(), temp_c_.end());
    std::string names;
    const std::pair<unsigned long long, const char*> bits[] = {
        {0x1, "gpu_idle"}, {0x2, "applications_clocks"}, {kSwPowerCap, "sw_power_cap"}, {kHwSlowdown, "hw_slowdown"},
        {0x10, "sync_boost"}, {kSwThermal, "sw_thermal"}, {kHwThermal, "hw_thermal"}, {kHwPowerBrake, "hw_power_brake"},
        {0x100, "display_clocks"}};
    for (auto& b : bits)
      if (mask_ & b.first) names += std::string(names.empty() ? "" : ", ") + "\"" + b.second + "\"";
    char buf[640];
    snprintf(buf, sizeof buf,
             "\"nvml\": {\"available\": true, \"samples\": %zu, \"sm_clock_mhz\": {\"min\": %u, \"median\": %u, "
             "\"max\": %u}, \"power_w\": {\"max\": %.1f, \"mean\": %.1f}, \"temperature_c_max\": %u, "
             "\"clock_event_reasons\": [%s], \"throttled\": %s, \"throttled_samples\": %d}, ",
             sm_.size(), s.front(), s[s.size() / 2], s.back(), pmax, mw_.empty() ? 0.0 : psum / mw_.size(), tmax,
             names.c_str(), (mask_ & kThrottleMask) ? "true" : "false", throttled_samples_);
    return buf;
  }
};
