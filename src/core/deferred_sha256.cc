#include "ferrite/core/deferred_sha256.h"

#include "ferrite/core/fingerprint.h"

namespace ferrite {

// A digest given as text: "computed" from the start, nothing to write.
class DeferredSha256::Known : public DeferredSha256::Source {
 public:
  explicit Known(std::string hex) {
    hex_ = std::move(hex);
    given_ = true;
    run_once(once_, [] {});  // nothing to compute
  }

 protected:
  void write(CanonicalSha256&) const override {}
};

DeferredSha256::DeferredSha256(std::string hex)
    : source_(std::make_shared<Known>(std::move(hex))) {}

DeferredSha256 DeferredSha256::of(std::shared_ptr<Source> source) {
  DeferredSha256 digest;
  digest.source_ = std::move(source);
  return digest;
}

const std::string& DeferredSha256::hex() const {
  static const std::string kEmpty;
  if (source_ == nullptr) return kEmpty;
  Source& source = *source_;
  run_once(source.once_, [&source] {  // returns at once when done
    thread_local CanonicalSha256 out;
    out.reset();
    source.write(out);
    source.hex_ = out.hex();
    source.release();
  });
  return source.hex_;
}

bool DeferredSha256::computed() const {
  return source_ == nullptr || source_->once_.done();
}

bool DeferredSha256::is_canonical_sha256() const {
  if (source_ == nullptr) return false;
  return !source_->given_ || ferrite::is_canonical_sha256(source_->hex_);
}

bool operator==(const DeferredSha256& a, const DeferredSha256& b) {
  if (a.source_ == b.source_) return true;
  return a.hex() == b.hex();
}

}  // namespace ferrite
