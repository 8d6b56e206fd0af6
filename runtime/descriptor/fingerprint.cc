// TransferSpec::fingerprint: XXH3-128 of a spec's normal form, the spec half of cache keys.
#include "runtime/support/hash.h"
#include "tmem/transfer.h"

namespace tmem {
namespace {

// One operand: everything check() and the kernel builders read from a view, in a form where equal
// maps are equal. The view's own digits are already canonical (unit digits dropped, contiguous
// digits fused); the base layout is canonicalized here (Layout::canonicalize keeps the map). The
// base tensor's shape is left out: the map goes from the view's flat index through the digits to
// the base's flat index, and the layout acts on that flat index alone. The axes mask is kept as
// written, since check()'s axis rules read it (a unit iter on a stray axis is still an error).
void add_operand(KeyBuilder& key, std::string_view tag, const View& view) {
  key.str("operand", tag);
  key.integer("dtype", static_cast<std::int64_t>(view.dtype()));
  key.integer("rank", view.ndim());
  for (std::int64_t extent : view.shape()) key.integer("extent", extent);
  key.integer("offset", view.offset());
  for (int d = 0; d < view.ndim(); ++d) {
    const std::span<const Digit> digits = view.digits(d);
    key.integer("digits", static_cast<std::int64_t>(digits.size()));
    for (const Digit& digit : digits) {
      key.integer("e", digit.extent);
      key.integer("s", digit.stride);
    }
  }
  key.integer("axes", static_cast<std::int64_t>(view.axes()));
  key.str("layout", view.base().layout().canonicalize().to_string());
}

}  // namespace

SpecFingerprint TransferSpec::fingerprint() const {
  SpecFingerprint cached;
  if (fingerprint_.get(cached)) return cached;
  KeyBuilder key;
  key.str("spec", "transfer-spec-v1");
  key.str("op", op_.to_string());
  key.str("scope", scope_.to_string());
  add_operand(key, "tmem", tmem_);
  add_operand(key, "regs", regs_);
  if (tmem2_) add_operand(key, "tmem2", *tmem2_);
  if (imm_) key.integer("imm", *imm_);
  const Key128 digest = key.finish();
  const SpecFingerprint value{digest.lo, digest.hi};
  fingerprint_.set(value);
  return value;
}

}  // namespace tmem
