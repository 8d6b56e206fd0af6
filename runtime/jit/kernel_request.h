// What one compile_kernel call works on once its context is made: the request the eager pipeline
// (compile_kernel.cc) and the tiers over it (tiers.h) share.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/compile/include_closure.h"
#include "runtime/jit/kernel_context.h"
#include "runtime/support/hash.h"
#include "tmem/specialize.h"

namespace tmem {

struct Includes {
  Key128 digest;
  int files = 0;
  std::shared_ptr<const IncludeClosure> closure;  // null for PTX
  // Why this source's kernel must not be cached: an include the scan cannot follow (a computed
  // include no macro names, one nested over 200 deep) would be outside the key, so an edit to it
  // would serve the old kernel. Empty when the closure is whole.
  std::string uncacheable;
};

struct Request {
  const KernelSource& source;
  std::span<const NamedTransfer> transfers;
  const KernelContext& context;
  const Includes& includes;
  Key128 key;  // the specialized kernel's
};

// Owned copies of a request, for a job that outlives the call.
struct OwnedRequest {
  KernelSource source;
  std::vector<NamedTransfer> transfers;
  KernelContext context;
  Includes includes;
  Key128 key;
  explicit OwnedRequest(const Request& request)
      : source(request.source),
        transfers(request.transfers.begin(), request.transfers.end()),
        context(request.context),
        includes(request.includes),
        key(request.key) {}
  Request view() const { return {source, transfers, context, includes, key}; }
};

}  // namespace tmem
