// Every field of the placement vocabulary as one line of text, so that two results can be
// compared field by field with EXPECT_EQ and a failure shows both in full. Written by hand, not
// through the proto conversions: a field the conversions drop must show up as a difference.
//
//   EXPECT_EQ(Describe(in_process.Reserve(r)), Describe(over_grpc.Reserve(r)));
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/placement_types.h"
#include "scheduler/snapshot_summary.h"

namespace phalanx::placement::testing {

inline std::string Describe(const std::vector<std::string>& list) {
  return absl::StrCat("[", absl::StrJoin(list, ","), "]");
}

template <typename Map>
std::string DescribeMap(const Map& map) {
  return absl::StrCat("{", absl::StrJoin(map, ",", absl::PairFormatter("=")), "}");
}

inline std::string Describe(const DomainId& d) {
  return absl::StrCat("domain{level=", d.level, " path=", Describe(d.path), "}");
}

inline std::string Describe(const std::optional<ElasticRange>& e) {
  if (!e.has_value()) return "elastic=none";
  return absl::StrCat("elastic{", e->min, "..", e->max, "/", e->step, "}");
}

inline std::string Describe(const GangRequest& r) {
  std::string out = absl::StrCat("request{job=", r.job, " count=", r.count, " ",
                                 Describe(r.elastic), " per_pod=", DescribeMap(r.per_pod),
                                 " selector=", DescribeMap(r.node_selector), " tolerations=[");
  for (const Toleration& t : r.tolerations) {
    absl::StrAppend(&out, "{", t.key, " ", t.op, " ", t.value, " ", t.effect, "}");
  }
  absl::StrAppend(&out, "] affinity=[");
  for (const NodeSelectorTerm& term : r.node_affinity) {
    for (const auto* list : {&term.match_expressions, &term.match_fields}) {
      absl::StrAppend(&out, "{");
      for (const NodeSelectorRequirement& e : *list) {
        absl::StrAppend(&out, "(", e.key, " ", e.op, " ", Describe(e.values), ")");
      }
      absl::StrAppend(&out, "}");
    }
  }
  absl::StrAppend(&out, "] required=", r.required_level, " preferred=", r.preferred_level,
                  " group=", r.group_size, "@", r.group_level, " priority=", r.priority,
                  " excluded=", Describe(r.excluded_nodes), " max_per_node=", r.max_pods_per_node,
                  "}");
  return out;
}

inline std::string Describe(const RunningGang& g) {
  return absl::StrCat("running{job=", g.job, " priority=", g.priority, " ", Describe(g.elastic),
                      "}");
}

inline std::string Describe(const Placement& p) {
  return absl::StrCat("placement{job=", p.job, " ", Describe(p.domain),
                      " nodes=", Describe(p.nodes), "}");
}

inline std::string Describe(const Explanation& e) {
  return absl::StrCat("explanation{summary=", e.summary, " wanted=", e.wanted,
                      " best=", e.best_domain.has_value() ? Describe(*e.best_domain) : "none",
                      " fit=", e.fit_in_best, " rejected=", DescribeMap(e.nodes_rejected),
                      " empty=",
                      e.max_fit_empty.has_value() ? absl::StrCat(*e.max_fit_empty) : "unset", "}");
}

inline std::string Describe(const PlacementResult& r) {
  return absl::StrCat("result{placed=", r.placed, " ", Describe(r.placement), " ",
                      Describe(r.explanation), "}");
}

inline std::string Describe(const PreemptionPlan& p) {
  std::string out = absl::StrCat("plan{feasible=", p.feasible, " victims=[");
  for (const Victim& v : p.victims) absl::StrAppend(&out, v.job, "->", v.new_count, ",");
  absl::StrAppend(&out, "] ", Describe(p.placement), " ", Describe(p.explanation), "}");
  return out;
}

inline std::string Describe(const StartEstimate& e) {
  return absl::StrCat("estimate{feasible=", e.feasible, " ended=", e.ended, " start=", e.start,
                      " ", Describe(e.placement), " ", Describe(e.explanation), "}");
}

inline std::string Describe(const SnapshotSummary& s) {
  std::string out = absl::StrCat(
      "summary{levels=", Describe(s.levels), " nodes=", s.nodes,
      " schedulable=", s.schedulable_nodes, " by_condition=", DescribeMap(s.nodes_by_condition),
      " tainted=", s.tainted_nodes, " pods=", s.pods, " reservations=", s.reservations,
      " gpus=", s.gpus, " free=", s.free_gpus, " total_domains=", s.total_domains, " domains=[");
  for (const DomainSummary& d : s.domains) {
    absl::StrAppend(&out, "{", Describe(d.domain), " level=", d.level_index, " nodes=", d.nodes,
                     " schedulable=", d.schedulable_nodes, " gpus=", d.gpus, " free=", d.free_gpus,
                    " histogram=[", absl::StrJoin(d.free_gpu_histogram, ","), "]}");
  }
  absl::StrAppend(&out, "] reservation_list=[");
  for (const ReservationSummary& r : s.reservation_list) {
    absl::StrAppend(&out, "{", r.job, " ", Describe(r.domain),
                    " nodes=", absl::StrJoin(r.nodes, ","), "}");
  }
  absl::StrAppend(&out, "]}");
  return out;
}

inline std::string Describe(const absl::Status& s) {
  return absl::StrCat("status{", absl::StatusCodeToString(s.code()), ": ", s.message(), "}");
}

template <typename T>
std::string Describe(const absl::StatusOr<T>& s) {
  return s.ok() ? Describe(*s) : Describe(s.status());
}

template <typename T>
std::string Describe(const std::vector<absl::StatusOr<T>>& list) {
  std::string out = "[";
  for (const auto& item : list) absl::StrAppend(&out, "\n  ", Describe(item));
  return out + "]";
}

}  // namespace phalanx::placement::testing
