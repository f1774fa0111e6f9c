// The encrypted scheduler: runs a circuit on CGGI ciphertexts over one or several devices, in
// waves or dataflow order, with batched bootstraps per gate group, a ciphertext pool per device
// and spilling to host memory (docs/circuits.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ember/cggi/context.h"
#include "ember/circuit/circuit.h"

namespace ember::circuit {

/// Wave: every group of step w + 1 waits (on the devices, the host does not) for all the work of
/// step w. Dataflow: each group waits only for the work that wrote its operands (and last read
/// the pool slots it overwrites), and a kind whose ready gates all have slack (none at its
/// latest level yet) and number fewer than dataflow_min_batch per device waits for a later,
/// wider group; the depth stays the circuit's.
enum class Mode { wave, dataflow };
/// "wave" or "dataflow"; parse_mode throws ParameterError for anything else.
const char* mode_name(Mode m);
Mode parse_mode(const std::string& name);

/// Where a run stands, for progress bars: steps (waves) and gates known complete.
struct Progress {
  std::size_t steps_done = 0, steps = 0, gates_done = 0, gates = 0;
  double seconds = 0;  // since the run started
};

/// The scheduler's choices (no global state: the caller holds these).
struct RunOptions {
  Mode mode = Mode::dataflow;  // measured faster than wave on H100s (docs/circuits.md)
  /// One bootstrap batch for every AND-type gate of a step (AND of possibly negated inputs,
  /// output possibly negated) and one for every XOR-type gate (negations are free): at most three
  /// batches per step and device. false: one batch per gate type.
  bool fuse = true;
  /// Ciphertexts a device's pool holds at once (per device); 0: from the device's free memory
  /// (half of it, less the batches' scratch). Past it, the coldest (next read latest) are
  /// spilled to page-locked host memory and brought back before use. At least 8.
  std::size_t max_live_ciphertexts = 0;
  /// Streams per device the groups of a step are spread over (at least 1).
  // 12: dot500 on 4 H100s 3.87 s against 5.2 s with 3 (docs/circuits.md); no change on 1 or 2.
  int streams_per_device = 12;
  /// Refine the even split (in gate order) by swapping gates toward the devices that hold
  /// their operands, the split staying even (fewer cross-device copies); false: gate order.
  bool locality = true;
  /// A kind's gates of a step go to no more devices than give each this many (at least one
  /// device): a small batch costs one bootstrap's latency on one GPU, and split over GPUs it only
  /// adds copies and fences. 0: 32 on GPUs (4 H100s, bool_128, seconds for this value = 1, 32,
  /// 64, 128: AES-128 2.78, 2.52, 2.60, 3.08; Speck-128, 705 steps of at most 130 gates: 6.61,
  /// 5.41, 5.40, 5.41; one GPU: 4.33 and 5.40), 1 on CPU devices (which share the cores anyway;
  /// 1 keeps small tests crossing devices). The devices taken are those holding most operands.
  std::size_t min_gates_per_device = 0;
  /// Dataflow mode: a kind's ready gates with slack are launched once this many per device are
  /// ready, or with a gate that cannot wait (0: 64, unmeasured on GPUs).
  std::size_t dataflow_min_batch = 0;
  /// Benchmarks only: the linear step stands in for every bootstrap (outputs are meaningless)
  /// to measure everything else the scheduler does.
  bool skip_bootstrap = false;
  /// Called as steps complete (on CPU devices after each step, on GPUs as the host waits at the
  /// end); may be empty. Runs on the calling thread.
  std::function<void(const Progress&)> progress;
};

/// What a run did.
struct RunStats {
  std::string mode;
  std::size_t devices = 0, gates = 0, bootstraps = 0, steps = 0;
  std::size_t launches = 0;                // bootstrap batches (groups)
  std::size_t gathers = 0;                 // gather calls (operands, results, copies)
  std::size_t cross_device_copies = 0;     // ciphertexts copied between devices
  std::size_t cross_device_transfers = 0;  // batched copies (one per source, target and group)
  std::size_t spilled = 0, restored = 0;   // ciphertexts to and from host memory
  std::vector<std::size_t> gates_per_device, peak_live_per_device, capacity_per_device;
  double plan_seconds = 0;   // host: steps, placement, slots, copies (before any device work)
  double issue_seconds = 0;  // host: enqueueing the work (on CPU devices: doing it)
  double wait_seconds = 0;   // host: waiting for the devices at the end
  double seconds = 0;        // the whole run
};

/// One device of a run: a context of the run's parameters there and the server key copied
/// there (cggi::ServerKey::to), both outliving the call.
struct DeviceKit {
  const cggi::Context* ctx = nullptr;
  const cggi::ServerKey* key = nullptr;
};

struct RunResult {
  std::vector<cggi::LweBatch> outputs;  // one per output port, on the home context's device
  RunStats stats;
};

/// Runs `c` on encrypted inputs: inputs[i] holds input port i's bits (LSB first, elements in
/// order) under the home context, or is empty (count 0: the port reads as zeros). `devices`
/// (distinct, all CPU devices or all GPUs, each kit's key a copy of one server key) do the work;
/// inputs come from and outputs go to home's device, which need not be one of them.
/// Throws ParameterError for inputs of the wrong size or options out of range, MismatchError for
/// inputs, contexts or keys of other parameters, keys, devices or encodings; the backend's errors
/// (DeviceError, DeviceMemoryError) pass through.
RunResult run(const Circuit& c, const cggi::Context& home,
              const std::vector<cggi::LweBatch>& inputs, const std::vector<DeviceKit>& devices,
              const RunOptions& options = {});

}  // namespace ember::circuit
