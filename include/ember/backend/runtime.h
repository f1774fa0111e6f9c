// The backend's runtime interface: devices, streams, events, memory, copies, timing, options.
//
// A backend is the only code that knows where memory lives. Every call named `_async` is
// stream-ordered: it returns once the work is enqueued (the CPU backend finishes before
// returning). Pointers are in the backend's own memory.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ember::backend {

enum class DeviceKind { cpu, cuda };

/// Where memory lives and work runs: one CUDA GPU, or a CPU device. CPU devices cpu:0, cpu:1, ...
/// share the host's memory and cores but are separate backends (their own tables and caches), so
/// that device sets, key replication and moves run, and are tested, without a GPU.
struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;
  /// "cpu" (cpu:0), "cpu:1", "cuda:0", ...
  std::string str() const;
  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator<(const Device& o) const { return kind != o.kind ? kind < o.kind : index < o.index; }
};

/// CPU devices a process may name (cpu:0 .. cpu:kMaxCpuDevices-1).
inline constexpr int kMaxCpuDevices = 64;

/// An ordered queue of work on one device (a cudaStream_t on CUDA; the CPU backend runs work
/// when it is enqueued, so its streams are null handles). The null Stream, `Stream{}`, is the
/// device's default stream: what callers pass when they have no stream of their own.
struct Stream {
  void* handle = nullptr;
};

/// A point in a stream's work that other streams (of any device of the same backend kind) can
/// wait for (a cudaEvent_t on CUDA; null on the CPU, whose work is done when enqueued).
struct Event {
  void* handle = nullptr;
};

/// Memory, streams, events and copies of one device, and its timing support. The
/// operation families (ring_ops.h, key_switch_ops.h, and those later schemes add) are separate
/// interfaces; Backend (backend.h) is a device's runtime with every family.
class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual Device device() const = 0;

  // Memory. allocate throws DeviceMemoryError with the size when the device is full.
  virtual void* allocate(std::size_t bytes, Stream stream) = 0;
  virtual void deallocate(void* p, std::size_t bytes, Stream stream) noexcept = 0;
  virtual void copy_from_host_async(void* dst, const void* src, std::size_t bytes,
                                    Stream stream) = 0;
  virtual void copy_to_host_async(void* dst, const void* src, std::size_t bytes, Stream stream) = 0;
  virtual void copy_async(void* dst, const void* src, std::size_t bytes, Stream stream) = 0;
  virtual void synchronize(Stream stream) = 0;
  virtual Stream default_stream() = 0;

  // Streams and events. A created stream runs concurrently with the others of its device;
  // destroy_stream waits for its work first and keeps the handle valid (for reuse) until the
  // backend goes, so objects still holding it never see a dangling stream. An event records the
  // work queued on a stream so far; wait_event makes later work of a stream (of this device) wait
  // for it without blocking the host. CPU: null handles, and every call returns at once.
  virtual Stream create_stream() = 0;
  virtual void destroy_stream(Stream stream) noexcept = 0;
  virtual Event create_event() = 0;
  virtual void destroy_event(Event event) noexcept = 0;
  virtual void record_event(Event event, Stream stream) = 0;
  virtual void wait_event(Stream stream, Event event) = 0;
  virtual void synchronize_event(Event event) = 0;
  /// Copies `bytes` from `src` in the memory of `src_device` (another device of this backend's
  /// kind) to `dst` in this device's memory, on `stream`: peer to peer where the two GPUs can
  /// reach each other, staged through host memory by the driver otherwise. The caller orders it
  /// after the source's writes (copy_between_devices does).
  virtual void copy_from_peer_async(void* dst, const void* src, const Device& src_device,
                                    std::size_t bytes, Stream stream) = 0;

  // Capacity planning and host staging (defaults in device.cpp, for the host).
  /// Bytes this device could allocate now, an estimate for sizing caches (CUDA: the driver's
  /// free memory; CPU: the host's available physical memory).
  virtual std::size_t memory_available();
  /// Host memory the device copies to and from without staging (CUDA: page-locked, usable by
  /// every GPU; CPU: ordinary memory), for copy_to_host_async / copy_from_host_async that
  /// overlap other work. Throws DeviceMemoryError when none is left.
  virtual void* allocate_host(std::size_t bytes);
  virtual void deallocate_host(void* p, std::size_t bytes) noexcept;

  // Benchmarking support. time_runs returns `iters` samples of the milliseconds one run of `fn`
  // takes, after `warmup` untimed runs. CPU: wall clock. CUDA: device time, from events around
  // 10 back-to-back runs (divided by 10) queued behind a spin kernel that outlasts the host's
  // enqueueing, so launch latency is not counted.
  virtual std::vector<double> time_runs(const std::function<void(Stream)>& fn, int warmup,
                                        int iters) = 0;
};

}  // namespace ember::backend
