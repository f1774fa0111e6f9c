// CGGI parameters: the literal a user fills in, its validation (consistency and the 128-bit
// security floor), the named presets and the parameter fingerprint.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/backend/cggi_ops.h"

namespace ember::cggi {

/// Noise of an encryption. gaussian: a rounded Gaussian of standard deviation `value` in torus
/// units (a fraction of 1); tuniform: TUniform(b), b = `value`, the integers of [-2^b, 2^b] on
/// the 2^W scale, the two ends with half the weight of the others (tfhe-rs's definition).
struct Noise {
  enum Kind { gaussian = 0, tuniform = 1 };
  Kind kind = gaussian;
  double value = 0;
  /// The standard deviation in torus units.
  double std_dev(int torus_bits) const;
};

/// The 128-bit security floor this library applies (Zama's concrete-security-curves, 128-bit
/// row: log2 sigma >= -0.026405028765226296 dim + 2.482642269104389, dim >= 450, fitted on
/// lattice-estimator runs for binary secrets): the smallest secure log2 of the noise standard
/// deviation (torus units) for an LWE dimension (for GLWE: k N), or +infinity below 450.
double secure_log2_std(std::size_t dim);

struct Params {
  std::string name;     // preset name, or "" for a user literal
  int torus_bits = 32;  // 32 (u32 words) or 64 (u64 words)
  std::size_t n = 0;    // small LWE dimension (key-switching output, blind-rotation input)
  std::size_t k = 1;    // GLWE dimension
  std::size_t N = 0;    // polynomial size
  Noise lwe_noise;      // noise of the small key's encryptions (key-switching key)
  Noise glwe_noise;     // noise of GLWE / GGSW and of fresh ciphertexts (the big key)
  int bk_base_log = 0, bk_levels = 0;
  int ks_base_log = 0, ks_levels = 0;
  bool insecure = false;  // allow parameters below the security floor (tests, experiments)

  /// Throws ParameterError for inconsistent sizes, for products the NTT cannot keep exact, and
  /// (unless insecure) for a dimension or noise below the security floor (secure_log2_std).
  void validate() const;
  /// Whether both the LWE and the GLWE problem meet the security floor.
  bool meets_security_floor() const;
  /// A hash of every field that changes the ciphertexts (not the name or the insecure flag).
  std::uint64_t fingerprint() const;
  /// The backend's view (limb split included). Valid parameters only.
  backend::CggiShape shape() const;

  /// A named preset (ParameterError for an unknown name); see params.cpp for their sources.
  static Params preset(const std::string& name);
  static std::vector<std::string> preset_names();
};

}  // namespace ember::cggi
