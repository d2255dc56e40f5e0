// The Kubernetes rules for object names, checked where a name the user wrote becomes one: a
// trace job is a Workload (a TrainingJob) in a queue, its queue a ClusterTrainingQueue and a
// TrainingQueue of that name, and a TrainingJob's name also names its headless Service.
//
//   const std::string why = DnsSubdomainProblem("Team_A");
//   // "must be lowercase letters, digits, '-' and '.', each '.'-separated part starting and
//   //  ending with a letter or digit (a DNS-1123 subdomain)"
#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace phalanx {

// The longest DNS-1123 subdomain, the limit of most object names.
inline constexpr size_t kMaxDnsSubdomainLength = 253;

// "" when `name` is a DNS-1123 subdomain, as the API server requires of most object names and
// the CRDs of spec.queueName and spec.clusterQueue (^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]
// ([-a-z0-9]*[a-z0-9])?)*$, at most 253 characters); otherwise why not, as a predicate ("must
// ..."), which never quotes the name.
std::string DnsSubdomainProblem(absl::string_view name);

// `name` for a message: quoted and escaped (common/text_input.h: Printable), or only its length
// when it is longer than any name.
std::string ShownName(absl::string_view name);

// Whether `name` is a DNS-1035 label of at most `max_length` characters: a lowercase letter, then
// lowercase letters, digits and '-', ending with a letter or digit (a Service's name).
bool IsDns1035Label(absl::string_view name, size_t max_length);

}  // namespace phalanx
