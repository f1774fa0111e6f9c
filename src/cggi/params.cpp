// CGGI parameters: validation, presets (with their sources), fingerprint and backend shape.
#include "ember/cggi/params.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "ember/core/errors.h"

namespace ember::cggi {

namespace {

int ceil_log2(std::size_t x) {
  int r = 0;
  while ((std::size_t{1} << r) < x) ++r;
  return r;
}

bool power_of_two(std::size_t x) { return x && !(x & (x - 1)); }

/// Bits of the bootstrapping key's limbs: the largest w <= W with (k+1) l N 2^(B-1) 2^(w-1)
/// <= 2^52, so that a product's coefficients stay exact in the FFT's doubles (cggi_fft.h).
std::size_t rows_of(const Params& p) { return (p.k + 1) * static_cast<std::size_t>(p.bk_levels); }

int limb_bits_for(const Params& p) {
  const int rows_log = ceil_log2(rows_of(p) * p.N);
  const int w = 52 - rows_log - (p.bk_base_log - 1) + 1;
  return w > p.torus_bits ? p.torus_bits : (w < 0 ? 0 : w);
}

Params make(const char* name, int bits, std::size_t n, std::size_t k, std::size_t N, Noise lwe,
            Noise glwe, int bkb, int bkl, int ksb, int ksl, bool insecure) {
  Params p;
  p.name = name;
  p.torus_bits = bits;
  p.n = n;
  p.k = k;
  p.N = N;
  p.lwe_noise = lwe;
  p.glwe_noise = glwe;
  p.bk_base_log = bkb;
  p.bk_levels = bkl;
  p.ks_base_log = ksb;
  p.ks_levels = ksl;
  p.insecure = insecure;
  return p;
}

constexpr Noise::Kind G = Noise::gaussian, TU = Noise::tuniform;

}  // namespace

double Noise::std_dev(int torus_bits) const {
  if (kind == gaussian) return value;
  // TUniform(b): variance (2^(2b+1) + 1) / 6 on the 2^W scale.
  return std::sqrt((std::ldexp(1.0, 2 * static_cast<int>(value) + 1) + 1) / 6) /
         std::ldexp(1.0, torus_bits);
}

double secure_log2_std(std::size_t dim) {
  if (dim < 450) return std::numeric_limits<double>::infinity();
  return -0.026405028765226296 * static_cast<double>(dim) + 2.482642269104389;
}

bool Params::meets_security_floor() const {
  return std::log2(lwe_noise.std_dev(torus_bits)) >= secure_log2_std(n) &&
         std::log2(glwe_noise.std_dev(torus_bits)) >= secure_log2_std(k * N);
}

void Params::validate() const {
  auto fail = [](const std::string& m) { throw ParameterError("CGGI parameters: " + m); };
  if (torus_bits != 32 && torus_bits != 64) fail("torus_bits must be 32 or 64");
  if (n < 1 || n > (1u << 14)) fail("n (the LWE dimension) must be in [1, 16384]");
  if (k < 1 || k > 8) fail("k (the GLWE dimension) must be in [1, 8]");
  if (!power_of_two(N) || N < 32 || N > (1u << 16))
    fail("N (the polynomial size) must be a power of two in [32, 65536]");
  for (auto [b, l, what] : {std::tuple{bk_base_log, bk_levels, "bootstrapping key"},
                            std::tuple{ks_base_log, ks_levels, "key-switching key"}}) {
    if (b < 1 || l < 1 || b * l > torus_bits || b >= torus_bits)
      fail(std::string("the ") + what + " decomposition needs base_log in [1, torus_bits), " +
           "levels >= 1 and base_log * levels <= torus_bits");
  }
  if (limb_bits_for(*this) < 8)
    fail(
        "(k+1) * bk_levels * N * 2^(bk_base_log-1) is too large for exact products in the "
        "FFT's doubles: lower bk_base_log or N");
  for (const Noise* e : {&lwe_noise, &glwe_noise}) {
    if (e->kind == Noise::gaussian && !(e->value > 0 && e->value < 0.125))
      fail("a Gaussian noise standard deviation must be in (0, 1/8) (torus units)");
    if (e->kind == Noise::tuniform &&
        !(e->value >= 0 && e->value < torus_bits - 4 && e->value == std::floor(e->value)))
      fail("a TUniform bound b must be an integer in [0, torus_bits - 4)");
    if (e->std_dev(torus_bits) * std::ldexp(1.0, torus_bits) < 1)
      fail("a noise below one unit of the torus's last bit is rounded away: raise it");
  }
  if (!insecure && !meets_security_floor())
    fail(
        "below the 128-bit security floor (log2 sigma >= -0.026405 dim + 2.4826, dim >= 450, "
        "for n and k N; see docs/cggi.md): raise the dimension or the noise, or pass "
        "insecure=True for tests");
}

std::uint64_t Params::fingerprint() const {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the fields
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(0x43474749);  // "CGGI"
  mix(torus_bits);
  mix(n);
  mix(k);
  mix(N);
  for (const Noise* e : {&lwe_noise, &glwe_noise}) {
    mix(e->kind);
    std::uint64_t bits;
    std::memcpy(&bits, &e->value, 8);
    mix(bits);
  }
  mix(bk_base_log);
  mix(bk_levels);
  mix(ks_base_log);
  mix(ks_levels);
  return h;
}

backend::CggiShape Params::shape() const {
  backend::CggiShape s;
  s.torus_bits = torus_bits;
  s.n = n;
  s.k = k;
  s.N = N;
  s.log2_n = ceil_log2(N);
  s.bk_base_log = bk_base_log;
  s.bk_levels = bk_levels;
  s.ks_base_log = ks_base_log;
  s.ks_levels = ks_levels;
  s.limb_bits = limb_bits_for(*this);
  s.limbs = (torus_bits + s.limb_bits - 1) / s.limb_bits;
  return s;
}

// Sources (docs/cggi.md has the same list):
// - bool_128: tfhe-rs boolean DEFAULT_PARAMETERS (tfhe/src/boolean/parameters): 132-bit
//   security, p-fail 2^-64.344 per gate as stated there. u32 torus.
// - int2_128: tfhe-rs shortint PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M64 (2 bits of
//   message + carry): 132-bit security, p-fail 2^-65.035 as stated there. u64 torus.
// - int4_128: tfhe-rs shortint PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M64 (4 bits):
//   132-bit security, p-fail 2^-64.138 as stated there. u64 torus.
// - tfhe_lib_insecure: the TFHE library's default gate-bootstrapping set (n = 630, N = 1024,
//   alpha 2^-15 and 2^-25), used by cuFHE and ARCTYREX; below this library's 128-bit floor.
// - test_insecure, test_int_insecure: small sets for fast tests, no security at all.
Params Params::preset(const std::string& name) {
  if (name == "bool_128")
    return make("bool_128", 32, 805, 3, 512, {G, 5.86e-6}, {G, 9.3e-10}, 10, 2, 3, 5, false);
  if (name == "int2_128")
    return make("int2_128", 64, 791, 2, 1024, {TU, 48}, {TU, 15}, 23, 1, 4, 3, false);
  if (name == "int4_128")
    return make("int4_128", 64, 887, 1, 2048, {TU, 46}, {TU, 17}, 22, 1, 3, 5, false);
  if (name == "tfhe_lib_insecure")
    return make("tfhe_lib_insecure", 32, 630, 1, 1024, {G, 3.0517578125e-05},
                {G, 2.98023223876953125e-08}, 7, 3, 2, 8, true);
  if (name == "test_insecure")
    return make("test_insecure", 32, 32, 1, 256, {G, 1.0 / (1 << 22)}, {G, 1.0 / (1 << 28)}, 8, 2,
                4, 4, true);
  if (name == "test_int_insecure")
    return make("test_int_insecure", 64, 32, 1, 512, {G, 1.0 / (1 << 22)}, {G, 1.0 / (1ull << 44)},
                16, 2, 4, 5, true);
  std::string names;
  for (const auto& s : preset_names()) names += (names.empty() ? "" : ", ") + s;
  throw ParameterError("no CGGI preset named '" + name + "': use one of " + names);
}

std::vector<std::string> Params::preset_names() {
  return {"bool_128",          "int2_128",      "int4_128",
          "tfhe_lib_insecure", "test_insecure", "test_int_insecure"};
}

}  // namespace ember::cggi
