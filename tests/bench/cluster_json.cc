#include "tests/bench/cluster_json.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace phalanx::bench {
namespace {

// Deterministic hex digits standing in for hashes, ids and digests.
std::string Hex(uint64_t seed, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  std::string out;
  out.reserve(digits);
  for (int d = 0; d < digits; ++d) {
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    out.push_back(kDigits[x & 15]);
  }
  return out;
}

// The five-character suffix the DaemonSet controller appends to a pod's generateName. Distinct
// for distinct seeds below 27^5 (multiplying by a number prime to 27 permutes the residues), so
// generated pod names never collide.
std::string PodSuffix(uint64_t seed) {
  static constexpr char kChars[] = "bcdfghjklmnpqrstvwxz2456789";
  constexpr uint64_t kSpace = 27 * 27 * 27 * 27 * 27;
  uint64_t x = (seed * 7919 + 12345) % kSpace;
  std::string out;
  for (int d = 0; d < 5; ++d) {
    out.push_back(kChars[x % 27]);
    x /= 27;
  }
  return out;
}

}  // namespace

const DaemonSet kDaemonSets[kDaemonSetKinds] = {
    {"aws-node", "kube-system",
     "602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni:v1.19.2", "25m", "64Mi"},
    {"kube-proxy", "kube-system",
     "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy:v1.34.0-eksbuild.2", "100m",
     "64Mi"},
    {"nvidia-device-plugin-daemonset", "kube-system", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
     "10m", "20Mi"},
    {"aws-efa-k8s-device-plugin", "kube-system",
     "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.6", "10m",
     "20Mi"},
    {"dcgm-exporter", "gpu-monitoring", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04",
     "100m", "128Mi"},
    {"node-exporter", "monitoring", "quay.io/prometheus/node-exporter:v1.8.2", "50m", "64Mi"},
    {"fluent-bit", "amazon-cloudwatch",
     "public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.4", "50m", "100Mi"},
    {"ebs-csi-node", "kube-system",
     "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-ebs-csi-driver:v1.38.1", "10m", "40Mi"},
    {"eks-pod-identity-agent", "kube-system",
     "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/eks-pod-identity-agent:0.1.21", "25m",
     "32Mi"},
};

// One pod as the API server returns it from a list: kubectl's last-applied annotation, three
// managedFields entries, a projected service-account volume, init container + sidecar, env,
// tolerations and the five status conditions.
std::string TrainingPodJson(int i, const std::string& node_name) {
  std::string rank = std::to_string(i % 64);
  std::string job = absl::StrCat("job-", i / 64);
  std::string uid = absl::StrCat("6f1a0b4e-2c39-4d0e-9a57-", 100000000000 + i);
  return absl::StrCat(
      R"({"metadata":{"name":")", job, "-", rank, R"(","generateName":")", job,
      R"(-","namespace":"team-)", i % 20, R"(","uid":")", uid, R"(","resourceVersion":")",
      1000000 + i,
      R"(","creationTimestamp":"2026-11-20T08:14:03Z","labels":{"app.kubernetes.io/name":"trainer","phalanx.dev/job":")",
      job, R"(","phalanx.dev/rank":")", rank,
      R"("},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"annotations\":{},\"name\":\"x\"}}\n"},)", R"("ownerReferences":[{"apiVersion":"phalanx.dev/v1alpha1","kind":"TrainingJob","name":")", job, R"(","uid":"0d6b5b0e-7f3a-4c1b-8d8e-5a1f2e3c4d5e","controller":true,"blockOwnerDeletion":true}],)", R"("finalizers":["phalanx.dev/gang"],"managedFields":[)", R"({"manager":"phalanx-operator","operation":"Update","apiVersion":"v1","time":"2026-11-20T08:14:03Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"phalanx.dev/gang\"":{}},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:phalanx.dev/job":{},"f:phalanx.dev/rank":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"0d6b5b0e-7f3a-4c1b-8d8e-5a1f2e3c4d5e\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"trainer\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"MASTER_ADDR\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"RANK\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},"f:limits":{".":{},"f:nvidia.com/gpu":{},"f:vpc.amazonaws.com/efa":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{},"f:nvidia.com/gpu":{},"f:vpc.amazonaws.com/efa":{}}}}},"f:schedulerName":{},"f:tolerations":{}}}},)", R"({"manager":"kube-scheduler","operation":"Update","apiVersion":"v1","time":"2026-11-20T08:14:05Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"PodScheduled\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}}}},"subresource":"status"},)", R"({"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-20T08:14:31Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:startTime":{}}},"subresource":"status"}]},)", R"("spec":{"volumes":[{"name":"kube-api-access-x7k2p","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}}],)", R"("initContainers":[{"name":"fetch-shards","image":"public.ecr.aws/phalanx/fetch:1.2","resources":{"requests":{"cpu":"4","memory":"16Gi"}},"terminationMessagePath":"/dev/termination-log","imagePullPolicy":"IfNotPresent"},)",
      R"({"name":"log-shipper","image":"public.ecr.aws/phalanx/fluent-bit:3.1","restartPolicy":"Always","resources":{"requests":{"cpu":"500m","memory":"512Mi"}},"imagePullPolicy":"IfNotPresent"}],)",
      R"("containers":[{"name":"trainer","image":"public.ecr.aws/phalanx/train:2026.11","command":["torchrun"],"args":["--nnodes=16","--nproc-per-node=8","train.py"],"env":[{"name":"MASTER_ADDR","value":")",
      job, R"(-0.)", job,
      R"("},{"name":"MASTER_PORT","value":"29500"},{"name":"WORLD_SIZE","value":"64"},{"name":"RANK","value":")",
      rank,
      R"("}],"resources":{"limits":{"nvidia.com/gpu":"8","vpc.amazonaws.com/efa":"32"},"requests":{"cpu":"180","memory":"1900Gi","nvidia.com/gpu":"8","vpc.amazonaws.com/efa":"32"}},"volumeMounts":[{"name":"kube-api-access-x7k2p","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],)",
      R"("restartPolicy":"Never","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","serviceAccount":"default","nodeName":")",
      node_name, R"(","securityContext":{},"schedulerName":"phalanx","tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priorityClassName":"training-high","priority":100000,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},)", R"("status":{"phase":"Running","conditions":[{"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-20T08:14:09Z"},{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-20T08:14:30Z"},{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-20T08:14:31Z"},{"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-20T08:14:31Z"},{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-20T08:14:05Z"}],"hostIP":"10.1.4.17","podIP":"10.1.77.203","podIPs":[{"ip":"10.1.77.203"}],"startTime":"2026-11-20T08:14:05Z","containerStatuses":[{"name":"trainer","state":{"running":{"startedAt":"2026-11-20T08:14:31Z"}},"lastState":{},"ready":true,"restartCount":0,"image":"public.ecr.aws/phalanx/train:2026.11","imageID":"","started":true}],"qosClass":"Burstable"}})");
}

std::string TrainingPodJson(int i) {
  return TrainingPodJson(i, absl::StrCat("ip-10-1-", i % 250, "-", i % 97, ".ec2.internal"));
}

std::string DaemonSetPodJson(int i, int kind, const std::string& node_name) {
  const DaemonSet& ds = kDaemonSets[kind % kDaemonSetKinds];
  const std::string name = absl::StrCat(ds.name, "-", PodSuffix(i));
  const std::string uid = absl::StrCat(Hex(i, 8), "-", Hex(i + 1, 4), "-4", Hex(i + 2, 3), "-a",
                                       Hex(i + 3, 3), "-", Hex(i + 4, 12));
  const std::string owner_uid = absl::StrCat("5c0e7d1a-93b2-4f6e-8a1d-", Hex(kind, 12));
  const std::string hash = Hex(kind + 100, 10);
  const std::string ip = absl::StrCat("10.1.", (i / 250) % 250, ".", i % 250);
  return absl::StrCat(
      R"({"metadata":{"name":")", name, R"(","generateName":")", ds.name,
      R"(-","namespace":")", ds.namespace_, R"(","uid":")", uid, R"(","resourceVersion":")",
      3000000 + i,
      R"(","creationTimestamp":"2026-11-19T22:03:17Z","labels":{"app.kubernetes.io/instance":")",
      ds.name, R"(","app.kubernetes.io/name":")", ds.name, R"(","controller-revision-hash":")",
      hash, R"(","k8s-app":")", ds.name, R"(","pod-template-generation":"3"},)",
      R"("annotations":{"prometheus.io/port":"9100","prometheus.io/scrape":"true"},)",
      R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":")", ds.name,
      R"(","uid":")", owner_uid, R"(","controller":true,"blockOwnerDeletion":true}],)",
      R"("managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-11-19T22:03:17Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:prometheus.io/port":{},"f:prometheus.io/scrape":{}},"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{},"f:controller-revision-hash":{},"f:k8s-app":{},"f:pod-template-generation":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\")",
      owner_uid,
      R"(\"}":{}}},"f:spec":{"f:affinity":{".":{},"f:nodeAffinity":{".":{},"f:requiredDuringSchedulingIgnoredDuringExecution":{}}},"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"NODE_NAME\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},"f:limits":{".":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:securityContext":{".":{},"f:privileged":{}},"f:volumeMounts":{}}},"f:dnsPolicy":{},"f:hostNetwork":{},"f:priorityClassName":{},"f:restartPolicy":{},"f:schedulerName":{},"f:serviceAccount":{},"f:serviceAccountName":{},"f:tolerations":{},"f:volumes":{}}}},)",
      R"({"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-19T22:03:41Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{},"f:startTime":{}}},"subresource":"status"}]},)",
      R"("spec":{"volumes":[{"name":"host-proc","hostPath":{"path":"/proc","type":""}},{"name":"host-sys","hostPath":{"path":"/sys","type":""}},{"name":"host-root","hostPath":{"path":"/","type":""}},{"name":"run","hostPath":{"path":"/run","type":"DirectoryOrCreate"}},)",
      R"({"name":"kube-api-access-)", PodSuffix(i + 7),
      R"(","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}}],)",
      R"("containers":[{"name":"main","image":")", ds.image,
      R"(","args":["--v=2","--path.procfs=/host/proc","--path.sysfs=/host/sys"],"env":[{"name":"NODE_NAME","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"spec.nodeName"}}},{"name":"AWS_REGION","value":"us-east-1"},{"name":"CLUSTER_NAME","value":"training-prod"}],)",
      R"("resources":{"limits":{"memory":")", ds.memory, R"("},"requests":{"cpu":")", ds.cpu,
      R"(","memory":")", ds.memory,
      R"("}},"volumeMounts":[{"name":"host-proc","readOnly":true,"mountPath":"/host/proc"},{"name":"host-sys","readOnly":true,"mountPath":"/host/sys"},{"name":"run","mountPath":"/run"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent","securityContext":{"privileged":true}}],)",
      R"("restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":")",
      ds.name, R"(","serviceAccount":")", ds.name, R"(","nodeName":")", node_name,
      R"(","hostNetwork":true,"securityContext":{},"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":[")",
      node_name,
      R"("]}]}]}}},"schedulerName":"default-scheduler","tolerations":[{"operator":"Exists"},{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute"},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute"},{"key":"node.kubernetes.io/disk-pressure","operator":"Exists","effect":"NoSchedule"},{"key":"node.kubernetes.io/memory-pressure","operator":"Exists","effect":"NoSchedule"},{"key":"node.kubernetes.io/pid-pressure","operator":"Exists","effect":"NoSchedule"},{"key":"node.kubernetes.io/unschedulable","operator":"Exists","effect":"NoSchedule"},{"key":"node.kubernetes.io/network-unavailable","operator":"Exists","effect":"NoSchedule"}],)",
      R"("priorityClassName":"system-node-critical","priority":2000001000,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},)",
      R"("status":{"phase":"Running","conditions":[{"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-19T22:03:25Z"},{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-19T22:03:17Z"},{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-19T22:03:41Z"},{"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-19T22:03:41Z"},{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-19T22:03:17Z"}],)",
      R"("hostIP":")", ip, R"(","hostIPs":[{"ip":")", ip, R"("}],"podIP":")", ip,
      R"(","podIPs":[{"ip":")", ip,
      R"("}],"startTime":"2026-11-19T22:03:17Z","containerStatuses":[{"name":"main","state":{"running":{"startedAt":"2026-11-19T22:03:40Z"}},"lastState":{},"ready":true,"restartCount":0,"image":")",
      ds.image, R"(","imageID":")", ds.image, "@sha256:", Hex(kind + 200, 64),
      R"(","containerID":"containerd://)", Hex(i + 11, 64),
      R"(","started":true}],"qosClass":"Burstable"}})");
}

std::string NodeName(int n) {
  return absl::StrCat("ip-10-", 1 + n / 62500, "-", (n / 250) % 250, "-", n % 250 + 1,
                      ".ec2.internal");
}

std::string NodeJson(int n) {
  const std::string name = NodeName(n);
  const std::string ip = absl::StrCat("10.", 1 + n / 62500, ".", (n / 250) % 250, ".", n % 250 + 1);
  const std::string instance = absl::StrCat("i-0", Hex(n, 16));
  std::string images;
  for (int k = 0; k < 14; ++k) {
    if (k > 0) images.push_back(',');
    absl::StrAppend(&images, R"({"names":["public.ecr.aws/phalanx/image-)", k, "@sha256:",
                    Hex(k + 500, 64), R"(","public.ecr.aws/phalanx/image-)", k, R"(:v1.)", k,
                    R"("],"sizeBytes":)", 48000000 + k * 7340033, "}");
  }
  return absl::StrCat(
      R"({"metadata":{"name":")", name, R"(","uid":")", Hex(n, 8), "-", Hex(n + 1, 4), "-4",
      Hex(n + 2, 3), "-b", Hex(n + 3, 3), "-", Hex(n + 4, 12), R"(","resourceVersion":")",
      2000000 + n, R"(","creationTimestamp":"2026-11-19T22:01:40Z","labels":{)",
      R"("beta.kubernetes.io/arch":"amd64","beta.kubernetes.io/instance-type":"p5.48xlarge","beta.kubernetes.io/os":"linux",)",
      R"("eks.amazonaws.com/capacityType":"CAPACITY_BLOCK","eks.amazonaws.com/nodegroup":"p5-training","eks.amazonaws.com/nodegroup-image":"ami-0c1e2d3f4a5b6c7d8","eks.amazonaws.com/sourceLaunchTemplateId":"lt-0a1b2c3d4e5f60718","eks.amazonaws.com/sourceLaunchTemplateVersion":"3",)",
      R"("failure-domain.beta.kubernetes.io/region":"us-east-1","failure-domain.beta.kubernetes.io/zone":"us-east-1a","k8s.io/cloud-provider-aws":"a1b2c3d4e5f60718293a4b5c6d7e8f90",)",
      R"("kubernetes.io/arch":"amd64","kubernetes.io/hostname":")", name,
      R"(","kubernetes.io/os":"linux","node.kubernetes.io/instance-type":"p5.48xlarge",)",
      R"("nvidia.com/cuda.driver.major":"550","nvidia.com/cuda.driver.minor":"127","nvidia.com/cuda.driver.rev":"05","nvidia.com/cuda.runtime.major":"12","nvidia.com/cuda.runtime.minor":"4","nvidia.com/gfd.timestamp":"1763589700",)",
      R"("nvidia.com/gpu.compute.major":"9","nvidia.com/gpu.compute.minor":"0","nvidia.com/gpu.count":"8","nvidia.com/gpu.deploy.device-plugin":"true","nvidia.com/gpu.deploy.dcgm-exporter":"true","nvidia.com/gpu.family":"hopper","nvidia.com/gpu.machine":"p5.48xlarge","nvidia.com/gpu.memory":"81559","nvidia.com/gpu.present":"true","nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.replicas":"1","nvidia.com/gpu.sharing-strategy":"none","nvidia.com/mig.capable":"false",)",
      R"("sagemaker.amazonaws.com/node-health-status":"Schedulable","topology.ebs.csi.aws.com/zone":"us-east-1a",)",
      R"("topology.k8s.aws/network-node-layer-1":"nn-)", Hex(n / 2048 + 1000, 17),
      R"(","topology.k8s.aws/network-node-layer-2":"nn-)", Hex(n / 256 + 2000, 17),
      R"(","topology.k8s.aws/network-node-layer-3":"nn-)", Hex(n / 16 + 3000, 17),
      R"(","topology.k8s.aws/zone-id":"use1-az4","topology.kubernetes.io/region":"us-east-1","topology.kubernetes.io/zone":"us-east-1a","vpc.amazonaws.com/efa.present":"true"},)",
      R"("annotations":{"alpha.kubernetes.io/provided-node-ip":")", ip,
      R"(","csi.volume.kubernetes.io/nodeid":"{\"ebs.csi.aws.com\":\")", instance,
      R"(\"}","node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true"},)",
      R"("managedFields":[{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-19T22:01:40Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:alpha.kubernetes.io/provided-node-ip":{},"f:volumes.kubernetes.io/controller-managed-attach-detach":{}},"f:labels":{".":{},"f:beta.kubernetes.io/arch":{},"f:beta.kubernetes.io/instance-type":{},"f:beta.kubernetes.io/os":{},"f:eks.amazonaws.com/capacityType":{},"f:eks.amazonaws.com/nodegroup":{},"f:eks.amazonaws.com/nodegroup-image":{},"f:failure-domain.beta.kubernetes.io/region":{},"f:failure-domain.beta.kubernetes.io/zone":{},"f:kubernetes.io/arch":{},"f:kubernetes.io/hostname":{},"f:kubernetes.io/os":{},"f:node.kubernetes.io/instance-type":{},"f:topology.kubernetes.io/region":{},"f:topology.kubernetes.io/zone":{}}},"f:spec":{"f:providerID":{}}}},)",
      R"({"manager":"nvidia-gpu-feature-discovery","operation":"Update","apiVersion":"v1","time":"2026-11-19T22:04:02Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:nvidia.com/cuda.driver.major":{},"f:nvidia.com/cuda.driver.minor":{},"f:nvidia.com/cuda.driver.rev":{},"f:nvidia.com/cuda.runtime.major":{},"f:nvidia.com/cuda.runtime.minor":{},"f:nvidia.com/gfd.timestamp":{},"f:nvidia.com/gpu.compute.major":{},"f:nvidia.com/gpu.compute.minor":{},"f:nvidia.com/gpu.count":{},"f:nvidia.com/gpu.family":{},"f:nvidia.com/gpu.machine":{},"f:nvidia.com/gpu.memory":{},"f:nvidia.com/gpu.product":{},"f:nvidia.com/gpu.replicas":{},"f:nvidia.com/gpu.sharing-strategy":{},"f:nvidia.com/mig.capable":{}}}}},)",
      R"({"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-20T08:20:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:allocatable":{"f:ephemeral-storage":{},"f:nvidia.com/gpu":{},"f:vpc.amazonaws.com/efa":{}},"f:capacity":{"f:ephemeral-storage":{},"f:nvidia.com/gpu":{},"f:vpc.amazonaws.com/efa":{}},"f:conditions":{"k:{\"type\":\"DiskPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"MemoryPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"PIDPressure\"}":{"f:lastHeartbeatTime":{}},"k:{\"type\":\"Ready\"}":{"f:lastHeartbeatTime":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{}}},"f:images":{},"f:nodeInfo":{"f:bootID":{}}}},"subresource":"status"}]},)",
      R"("spec":{"providerID":"aws:///us-east-1a/)", instance,
      R"(","taints":[{"key":"nvidia.com/gpu","value":"true","effect":"NoSchedule"}]},)",
      R"("status":{"capacity":{"cpu":"192","ephemeral-storage":"30787564Ki","hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"2097152Mi","nvidia.com/gpu":"8","pods":"110","vpc.amazonaws.com/efa":"32"},)",
      R"("allocatable":{"cpu":"191450m","ephemeral-storage":"28389899144","hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"2063004Mi","nvidia.com/gpu":"8","pods":"110","vpc.amazonaws.com/efa":"32"},)",
      R"("conditions":[{"type":"MemoryPressure","status":"False","lastHeartbeatTime":"2026-11-20T08:20:00Z","lastTransitionTime":"2026-11-19T22:01:40Z","reason":"KubeletHasSufficientMemory","message":"kubelet has sufficient memory available"},)",
      R"({"type":"DiskPressure","status":"False","lastHeartbeatTime":"2026-11-20T08:20:00Z","lastTransitionTime":"2026-11-19T22:01:40Z","reason":"KubeletHasNoDiskPressure","message":"kubelet has no disk pressure"},)",
      R"({"type":"PIDPressure","status":"False","lastHeartbeatTime":"2026-11-20T08:20:00Z","lastTransitionTime":"2026-11-19T22:01:40Z","reason":"KubeletHasSufficientPID","message":"kubelet has sufficient PID available"},)",
      R"({"type":"Ready","status":"True","lastHeartbeatTime":"2026-11-20T08:20:00Z","lastTransitionTime":"2026-11-19T22:02:11Z","reason":"KubeletReady","message":"kubelet is posting ready status"}],)",
      R"("addresses":[{"type":"InternalIP","address":")", ip,
      R"("},{"type":"InternalDNS","address":")", name, R"("},{"type":"Hostname","address":")",
      name, R"("}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},)",
      R"("nodeInfo":{"machineID":")", Hex(n + 20, 32), R"(","systemUUID":"ec2)", Hex(n + 21, 5),
      "-", Hex(n + 22, 4), "-", Hex(n + 23, 4), "-", Hex(n + 24, 4), "-", Hex(n + 25, 12),
      R"(","bootID":")", Hex(n + 26, 8), "-", Hex(n + 27, 4), "-", Hex(n + 28, 4), "-",
      Hex(n + 29, 4), "-", Hex(n + 30, 12),
      R"(","kernelVersion":"6.1.115-126.197.amzn2023.x86_64","osImage":"Amazon Linux 2023.6.20241121","containerRuntimeVersion":"containerd://1.7.23","kubeletVersion":"v1.34.0-eks-7f9249a","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"},)",
      R"("images":[)", images, "]}}");
}

std::string ClusterPodJson(int i, const PodMix& mix) {
  const int slot = i / mix.pods_per_node;
  const std::string node = NodeName(slot % mix.nodes);
  const int within = i % mix.pods_per_node;
  if (within == 0) return TrainingPodJson(slot, node);
  return DaemonSetPodJson(i, within - 1, node);
}

std::string ListJson(std::string_view kind, int first, int count,
                     const std::function<std::string(int)>& item,
                     std::string_view continue_token) {
  std::string text = absl::StrCat(R"({"kind":")", absl::string_view(kind.data(), kind.size()),
                                  R"(","apiVersion":"v1","metadata":{"resourceVersion":"2000000")");
  if (!continue_token.empty()) {
    absl::StrAppend(&text, R"(,"continue":")",
                    absl::string_view(continue_token.data(), continue_token.size()), "\"");
  }
  text.append(R"(},"items":[)");
  for (int i = first; i < first + count; ++i) {
    if (i > first) text.push_back(',');
    text.append(item(i));
  }
  text.append("]}");
  return text;
}

}  // namespace phalanx::bench
