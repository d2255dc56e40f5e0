#include "operator/server/template_checks.h"

#include "absl/strings/str_cat.h"
#include "operator/controller/pod_builder.h"

namespace phalanx::operator_server {

std::string TemplateShape(const kube::TrainingJob& job) {
  kube::TrainingJob same = job;
  same.meta.name = "template-shape";
  same.meta.uid = "template-shape";
  same.replicas = 1;
  const controller::PodContext ctx{.world_size = 1, .elastic = job.elastic};
  absl::StatusOr<std::string> pod = controller::BuildPod(same, ctx, 0);
  return pod.ok() ? absl::StrCat(job.meta.namespace_, "\n", *pod) : std::string();
}

}  // namespace phalanx::operator_server
