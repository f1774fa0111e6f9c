// BackendOptions: the per-backend switches (NTT schedule and table, arithmetic paths, fusions)
// that used to be process-global environment variables, and OptionsCell, the snapshot holder
// through which a backend publishes them to its launchers without a lock per launch.
//
// Every switch here changes which kernels run, never the words they produce: a test sets them
// in-process on both settings and compares against the CPU backend. The environment variables
// (table in docs/user-guide.md, "Backend options") only seed the options of a backend when it
// is created (BackendOptions::from_environment); nothing reads them later.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ember::backend {

/// A fusion of two steps into one kernel: the backend's size rule (automatic), never (off), or
/// wherever the fused kernel can run at all (always; tests use it to reach small sizes).
enum class Fusion { automatic, off, always };

/// "auto", "off" or "always".
const char* fusion_name(Fusion f);
/// Parses fusion_name's words; throws ParameterError naming them otherwise.
Fusion parse_fusion(const std::string& name);

/// One measured row of an NTT autotune table: the fastest schedule per direction for a batch of
/// `limbs` limbs of size 2^log_n on one arithmetic path (FP64 when !integer_path).
struct NttTableEntry {
  int log_n = 0;
  int limbs = 0;
  bool integer_path = false;
  std::string forward;
  std::string inverse;
  // Defined out of line: CUDA sources include this header as C++17 (no defaulted ==).
  bool operator==(const NttTableEntry& o) const;
};

struct BackendOptions {
  /// NTT schedule: "auto" (the tuned table's choice per size) or one of Backend::ntt_variants().
  std::string ntt_variant = "auto";
  /// Primes of at most 50 bits take the FP64 NTT path (EMBER_NTT_FP64=0: every limb on the
  /// integer path). Same words either way.
  bool ntt_fp64 = true;
  /// Forward integer-path transforms of primes below 2^57 skip the butterfly reductions
  /// (EMBER_NTT_UNREDUCED=0 keeps them). Same words.
  bool ntt_unreduced = true;
  /// ModUp's transforms leave unreduced words for the key products (EMBER_KEY_PRODUCT_WORDS=0
  /// reduces them to canonical values). Same results.
  bool key_product_words = true;
  /// Base conversions with byte planes run on the integer tensor cores (EMBER_BCONV_TENSOR=0:
  /// on the CUDA cores). Same words.
  bool bconv_tensor = true;
  /// BFV's forward NTT fused with the tensor product (EMBER_FUSED_TENSOR=0 off, =1 always).
  Fusion fused_tensor = Fusion::automatic;
  /// ModUp's forward NTT fused with the key inner product (EMBER_FUSED_KEY_PRODUCT=0|1).
  Fusion fused_key_product = Fusion::automatic;
  /// Ciphertexts per block of CGGI's Fourier blind rotation (1, 2 or 4; 0: by batch size, see
  /// docs/cggi.md). EMBER_CGGI_ROTATION_GROUP=1|2|4. Same words.
  int cggi_rotation_group = 0;
  /// A measured autotune table (`ember tune`) that replaces the built-in one for the paths it
  /// has rows for; empty: the built-in table of the GPU nearest to this one.
  std::vector<NttTableEntry> ntt_table;
  /// Where ntt_table came from (a file name, say), for display; "" with the built-in table.
  std::string ntt_table_name;

  /// The defaults, with the environment variables above applied (read at each call: a backend
  /// calls it once, when it is created).
  static BackendOptions from_environment();
  bool operator==(const BackendOptions& o) const;
};

/// Holds a backend's current options as an immutable snapshot: get() is one atomic load, so
/// launchers read options without a lock. set() publishes a new snapshot under a mutex; the
/// snapshots it replaced stay alive as long as the cell (a reader may still hold a reference),
/// and setting options equal to a kept one reuses it, so toggling between settings does not grow
/// the list. Setting options while operations run on other threads is safe but those operations
/// may see either setting; set them between operations.
class OptionsCell {
 public:
  explicit OptionsCell(const BackendOptions& initial);
  OptionsCell(const OptionsCell&) = delete;
  OptionsCell& operator=(const OptionsCell&) = delete;
  const BackendOptions& get() const noexcept { return *current_.load(std::memory_order_acquire); }
  void set(const BackendOptions& o);

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<const BackendOptions>> kept_;
  std::atomic<const BackendOptions*> current_;
};

}  // namespace ember::backend
