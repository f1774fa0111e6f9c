// BackendOptions: names, the environment seed, validation, and the snapshot cell.
#include "ember/backend/options.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ember/backend/backend.h"
#include "ember/core/errors.h"

namespace ember::backend {

const char* fusion_name(Fusion f) {
  switch (f) {
    case Fusion::off:
      return "off";
    case Fusion::always:
      return "always";
    case Fusion::automatic:
      break;
  }
  return "auto";
}

Fusion parse_fusion(const std::string& name) {
  if (name == "auto") return Fusion::automatic;
  if (name == "off") return Fusion::off;
  if (name == "always") return Fusion::always;
  throw ParameterError("unknown fusion setting '" + name + "': use 'auto', 'off' or 'always'");
}

bool NttTableEntry::operator==(const NttTableEntry& o) const {
  return log_n == o.log_n && limbs == o.limbs && integer_path == o.integer_path &&
         forward == o.forward && inverse == o.inverse;
}

bool BackendOptions::operator==(const BackendOptions& o) const {
  return ntt_variant == o.ntt_variant && ntt_fp64 == o.ntt_fp64 &&
         ntt_unreduced == o.ntt_unreduced && key_product_words == o.key_product_words &&
         bconv_tensor == o.bconv_tensor && fused_tensor == o.fused_tensor &&
         fused_key_product == o.fused_key_product && cggi_rotation_group == o.cggi_rotation_group &&
         ntt_table == o.ntt_table && ntt_table_name == o.ntt_table_name;
}

namespace {
/// The value of environment variable `name`, "" when unset.
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}
/// The fusion switches' environment form: 0 off, 1 always, anything else the size rule.
Fusion env_fusion(const char* name) {
  const std::string v = env(name);
  return v == "0" ? Fusion::off : v == "1" ? Fusion::always : Fusion::automatic;
}
}  // namespace

BackendOptions BackendOptions::from_environment() {
  // The one place the switches' environment variables are read (docs/user-guide.md has the
  // table). "0" turns an on/off switch off; other values keep the default, as before.
  BackendOptions o;
  o.ntt_fp64 = env("EMBER_NTT_FP64") != "0";
  o.ntt_unreduced = env("EMBER_NTT_UNREDUCED") != "0";
  o.key_product_words = env("EMBER_KEY_PRODUCT_WORDS") != "0";
  o.bconv_tensor = env("EMBER_BCONV_TENSOR") != "0";
  o.fused_tensor = env_fusion("EMBER_FUSED_TENSOR");
  o.fused_key_product = env_fusion("EMBER_FUSED_KEY_PRODUCT");
  const std::string group = env("EMBER_CGGI_ROTATION_GROUP");
  if (group == "1" || group == "2" || group == "4") o.cggi_rotation_group = group[0] - '0';
  return o;
}

OptionsCell::OptionsCell(const BackendOptions& initial) {
  kept_.push_back(std::make_unique<const BackendOptions>(initial));
  current_.store(kept_.back().get(), std::memory_order_release);
}

void OptionsCell::set(const BackendOptions& o) {
  std::lock_guard lock(mutex_);
  for (const auto& k : kept_)
    if (*k == o) {
      current_.store(k.get(), std::memory_order_release);
      return;
    }
  kept_.push_back(std::make_unique<const BackendOptions>(o));
  current_.store(kept_.back().get(), std::memory_order_release);
}

void Backend::set_options(const BackendOptions& o) {
  const std::vector<std::string> names = ntt_variants();
  std::string valid = "'auto'";
  for (const auto& n : names) valid += ", '" + n + "'";
  const auto known = [&](const std::string& v) {
    return std::find(names.begin(), names.end(), v) != names.end();
  };
  const std::string where = " on " + device().str();
  if (o.ntt_variant != "auto" && !known(o.ntt_variant))
    throw ParameterError("unknown NTT variant '" + o.ntt_variant + "'" + where + ": use " + valid);
  for (const auto& e : o.ntt_table) {
    if (e.log_n < 1 || e.log_n > 30 || e.limbs < 1)
      throw ParameterError("NTT table row (log_n " + std::to_string(e.log_n) + ", limbs " +
                           std::to_string(e.limbs) +
                           "): log_n must be in [1, 30] and limbs at least 1");
    for (const std::string* v : {&e.forward, &e.inverse})
      if (!known(*v))
        throw ParameterError("NTT table row (log_n " + std::to_string(e.log_n) + ", limbs " +
                             std::to_string(e.limbs) + ") names variant '" + *v + "', unknown" +
                             where + ": use " + valid.substr(8));
  }
  options_.set(o);
}

}  // namespace ember::backend
