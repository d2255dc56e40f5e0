#include "scheduler/extender/kube_binder.h"

#include "kube/client.h"

namespace phalanx::extender {

absl::Status KubeBinder::Bind(std::string_view ns, std::string_view pod, std::string_view uid,
                              std::string_view node) {
  return client_.Bind(ns, pod, uid, node);
}

}  // namespace phalanx::extender
