-- The mock's fidelity to the API server (docs/mock.md), each case run on
-- the mock and on the fake API server (tests/lua/fidelity/worlds.lua):
-- Immutable fields: the update validation that refuses a change with a
-- 422 Invalid naming the field.
local t = require "uphook.test"
local worlds = require "worlds"

local NS, case, refused = worlds.NS, worlds.case, worlds.refused

-- Kubernetes 1.32's update validation (kubernetes/kubernetes@v1.32.3,
-- pkg/apis/<group>/validation/validation.go), the facts as data in
-- lua/backend/mock/validate.lua (IMMUTABLE, the update functions); a 422 Invalid
-- names the field, and an apply or a replace is refused alike.

-- networking ValidateIngressClassUpdate: ValidateImmutableField on
-- spec.controller (the issue's example).
case("IngressClass.spec.controller is immutable", function(w)
  local ic = { apiVersion = "networking.k8s.io/v1", kind = "IngressClass",
    metadata = { name = "fidelity-ic" },
    spec = { controller = "k8s.io/ingress-nginx" } }
  w.apply(ic, "kubectl-client-side-apply")
  ic.spec.controller = "example.com/other"
  refused(w, ic, 'IngressClass.networking.k8s.io "fidelity-ic" is invalid: '
    .. 'spec.controller: Invalid value: "example.com/other": field is '
    .. 'immutable')
  w.delete("IngressClass", "fidelity-ic")
end)

-- core ValidateSecretUpdate: ValidateImmutableField on type.
case("Secret.type is immutable", function(w)
  local s = { apiVersion = "v1", kind = "Secret",
    metadata = { name = "imm-secret", namespace = NS }, type = "Opaque",
    data = { a = "YQ==" } }
  w.apply(s, "kubectl")
  s.type = "kubernetes.io/basic-auth"
  refused(w, s, 'Secret "imm-secret" is invalid: type: Invalid value: '
    .. '"kubernetes.io/basic-auth": field is immutable')
end)

-- scheduling ValidatePriorityClassUpdate: "value: Forbidden: may not be
-- changed in an update."
case("PriorityClass.value may not change", function(w)
  local pc = { apiVersion = "scheduling.k8s.io/v1", kind = "PriorityClass",
    metadata = { name = "fidelity-pc" }, value = 1000 }
  w.apply(pc, "kubectl")
  pc.value = 2000
  refused(w, pc, 'PriorityClass.scheduling.k8s.io "fidelity-pc" is '
    .. 'invalid: value: Forbidden: may not be changed in an update.')
  w.delete("PriorityClass", "fidelity-pc")
end)

-- storage ValidateCSIDriverUpdate: attachRequired is immutable;
-- podInfoOnMount is mutable since 1.29 (the API reference says so).
case("CSIDriver.spec.attachRequired is immutable, podInfoOnMount is not",
  function(w)
    local d = { apiVersion = "storage.k8s.io/v1", kind = "CSIDriver",
      metadata = { name = "fidelity.csi.example.com" },
      spec = { attachRequired = true, podInfoOnMount = false } }
    w.apply(d, "kubectl")
    d.spec.podInfoOnMount = true
    t.eq(w.apply(d, "uphook").spec.podInfoOnMount, true)
    d.spec.attachRequired = false
    refused(w, d, 'CSIDriver.storage.k8s.io "fidelity.csi.example.com" is '
      .. 'invalid: spec.attachRequired: Invalid value: false: field is '
      .. 'immutable')
    w.delete("CSIDriver", "fidelity.csi.example.com")
  end)

-- rbac ValidateRoleBindingUpdate: "cannot change roleRef".
case("a RoleBinding's roleRef cannot change", function(w)
  local rb = { apiVersion = "rbac.authorization.k8s.io/v1",
    kind = "RoleBinding", metadata = { name = "imm-rb", namespace = NS },
    roleRef = { apiGroup = "rbac.authorization.k8s.io", kind = "Role",
                name = "a" },
    subjects = { { kind = "ServiceAccount", name = "default",
                   namespace = NS } } }
  w.apply(rb, "kubectl")
  rb.roleRef.name = "b"
  refused(w, rb, 'RoleBinding.rbac.authorization.k8s.io "imm-rb" is '
    .. 'invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:'
    .. '"rbac.authorization.k8s.io", Kind:"Role", Name:"b"}: cannot change '
    .. 'roleRef')
end)

-- core ValidatePersistentVolumeUpdate: the volume source is fixed once
-- created (the real message goes on with a diff of the two sources).
case("a PersistentVolume's volume source is immutable", function(w)
  local pv = { apiVersion = "v1", kind = "PersistentVolume",
    metadata = { name = "fidelity-pv" },
    spec = { capacity = { storage = "1Gi" }, accessModes = { "ReadWriteOnce" },
      persistentVolumeReclaimPolicy = "Retain",
      hostPath = { path = "/srv/a" } } }
  w.apply(pv, "kubectl")
  pv.spec.persistentVolumeReclaimPolicy = "Delete"
  t.eq(w.apply(pv, "uphook").spec.persistentVolumeReclaimPolicy, "Delete")
  pv.spec.hostPath.path = "/srv/b"
  local e = w.err(function() w.apply(pv, "uphook") end)
  t.eq(e.code, 422)
  t.match(e.message, '^PersistentVolume "fidelity%-pv" is invalid: '
    .. 'spec%.persistentvolumesource: Forbidden: '
    .. 'spec%.persistentvolumesource is immutable after creation')
  w.delete("PersistentVolume", "fidelity-pv")
end)

-- apps ValidateStatefulSetUpdate (kubernetes/kubernetes@v1.32.3
-- pkg/apis/apps/validation/validation.go): the spec may change only in
-- the fields it names, one Forbidden on spec for any other.
case("a StatefulSet's spec: only replicas, template, updateStrategy... change",
  function(w)
    local function sts(extra)
      local o = { apiVersion = "apps/v1", kind = "StatefulSet",
        metadata = { name = "fid-sts", namespace = NS },
        spec = { serviceName = "fid-sts", replicas = 1,
          selector = { matchLabels = { app = "fid-sts" } },
          template = { metadata = { labels = { app = "fid-sts" } },
            spec = { containers = { { name = "c", image = "img:1" } } } } } }
      for k, v in pairs(extra or {}) do o.spec[k] = v end
      return o
    end
    w.apply(sts(), "uphook")
    local o = w.apply(sts { replicas = 2, minReadySeconds = 5 }, "uphook")
    t.eq(o.spec.replicas, 2)
    refused(w, sts { replicas = 2, minReadySeconds = 5,
      serviceName = "other" }, 'StatefulSet.apps "fid-sts" is invalid: '
      .. "spec: Forbidden: updates to statefulset spec for fields other "
      .. "than 'replicas', 'ordinals', 'template', 'updateStrategy', "
      .. "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
      .. "forbidden")
    w.delete("StatefulSet", "fid-sts", NS)
  end)

-- storage ValidateStorageClassUpdate (kubernetes/kubernetes@v1.32.3
-- pkg/apis/storage/validation/validation.go): parameters, provisioner
-- and reclaimPolicy Forbidden ("updates to ... are forbidden."),
-- volumeBindingMode ValidateImmutableField; allowVolumeExpansion may
-- change.
case("a StorageClass: parameters, provisioner, reclaimPolicy, binding mode fixed",
  function(w)
    local function sc(extra)
      local o = { apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
        metadata = { name = "fid-sc" }, provisioner = "fidelity.example.com",
        parameters = { tier = "a" }, reclaimPolicy = "Delete",
        volumeBindingMode = "Immediate" }
      for k, v in pairs(extra or {}) do o[k] = v end
      return o
    end
    w.apply(sc(), "uphook")
    t.eq(w.apply(sc { allowVolumeExpansion = true }, "uphook")
           .allowVolumeExpansion, true)
    refused(w, sc { allowVolumeExpansion = true, parameters = { tier = "b" } },
      'StorageClass.storage.k8s.io "fid-sc" is invalid: parameters: '
      .. "Forbidden: updates to parameters are forbidden.")
    refused(w, sc { allowVolumeExpansion = true,
      provisioner = "other.example.com" }, 'StorageClass.storage.k8s.io '
      .. '"fid-sc" is invalid: provisioner: Forbidden: updates to '
      .. "provisioner are forbidden.")
    refused(w, sc { allowVolumeExpansion = true, reclaimPolicy = "Retain" },
      'StorageClass.storage.k8s.io "fid-sc" is invalid: reclaimPolicy: '
      .. "Forbidden: updates to reclaimPolicy are forbidden.")
    refused(w, sc { allowVolumeExpansion = true,
      volumeBindingMode = "WaitForFirstConsumer" }, 'StorageClass.storage.'
      .. 'k8s.io "fid-sc" is invalid: volumeBindingMode: Invalid value: '
      .. '"WaitForFirstConsumer": field is immutable')
    w.delete("StorageClass", "fid-sc")
  end)

-- apiextensions ValidateCustomResourceDefinitionUpdate
-- (kubernetes/apiextensions-apiserver@0350e46e pkg/apis/apiextensions/
-- validation/validation.go): spec.scope is ValidateImmutableField (so is
-- spec.group, which also names the CRD).
case("a CRD's scope is immutable", function(w)
  local crd = { apiVersion = "apiextensions.k8s.io/v1",
    kind = "CustomResourceDefinition",
    metadata = { name = "gadgets.fidelity.example.com" },
    spec = { group = "fidelity.example.com", scope = "Namespaced",
      names = { plural = "gadgets", singular = "gadget", kind = "Gadget",
                listKind = "GadgetList" },
      versions = { { name = "v1", served = true, storage = true,
        schema = { openAPIV3Schema = { type = "object",
          ["x-kubernetes-preserve-unknown-fields"] = true } } } } } }
  w.apply(crd, "uphook")
  w.wait_established("gadgets.fidelity.example.com")
  crd.spec.scope = "Cluster"
  refused(w, crd, 'CustomResourceDefinition.apiextensions.k8s.io '
    .. '"gadgets.fidelity.example.com" is invalid: spec.scope: Invalid '
    .. 'value: "Cluster": field is immutable')
  w.delete("CustomResourceDefinition", "gadgets.fidelity.example.com")
end)

-- core ValidatePersistentVolumeClaimUpdate (kubernetes/kubernetes@v1.32.3
-- pkg/apis/core/validation/validation.go): "spec is immutable after
-- creation except resources.requests and volumeAttributesClassName for
-- bound claims" (the real message goes on with a diff of the two specs);
-- with RecoverVolumeExpansionFailure (beta, on in 1.32) a request may go
-- down but not to status.capacity or below ("field can not be less than
-- status.capacity"). Growing is the PersistentVolumeClaimResize admission
-- plugin's (plugin/pkg/admission/storage/persistentvolume/resize/
-- admission.go): only with a StorageClass that has allowVolumeExpansion,
-- else 403.
case("a bound PVC: only its requests change, never to its capacity or below",
  function(w)
    local function sc(name, grow)
      return { apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
        metadata = { name = name }, provisioner = "fidelity.example.com",
        allowVolumeExpansion = grow }
    end
    local function pvc(name, class, size)
      return { apiVersion = "v1", kind = "PersistentVolumeClaim",
        metadata = { name = name, namespace = NS },
        spec = { storageClassName = class, accessModes = { "ReadWriteOnce" },
          volumeName = "pv-" .. name,
          resources = { requests = { storage = size } } } }
    end
    local bound = pvc("fid-data", "fid-grow", "1Gi")
    bound.status = { phase = "Bound", capacity = { storage = "1Gi" } }
    local fixed = pvc("fid-fixed", "fid-fixed", "1Gi")
    fixed.status = { phase = "Bound", capacity = { storage = "1Gi" } }
    w.seed { sc("fid-grow", true), sc("fid-fixed", false), bound, fixed }
    -- the class, the access modes: refused
    local e = w.err(function()
      w.apply(pvc("fid-data", "fid-fixed", "1Gi"), "uphook")
    end)
    t.eq(e.code, 422)
    t.match(e.message, '^PersistentVolumeClaim "fid%-data" is invalid: '
      .. "spec: Forbidden: spec is immutable after creation except "
      .. "resources%.requests and volumeAttributesClassName for bound claims")
    t.match(e.message, 'StorageClassName: "fid%-fixed"')
    local p = pvc("fid-data", "fid-grow", "1Gi")
    p.spec.accessModes = { "ReadWriteMany" }
    e = w.err(function() w.apply(p, "uphook") end)
    t.match(e.message, "spec is immutable after creation")
    -- grown, with a class that allows it
    local o = w.apply(pvc("fid-data", "fid-grow", "2Gi"), "uphook")
    t.eq(o.spec.resources.requests.storage, "2Gi")
    -- shrunk to below its capacity: refused
    e = w.err(function()
      w.apply(pvc("fid-data", "fid-grow", "512Mi"), "uphook")
    end)
    t.eq(e.code, 422)
    t.eq(e.message, 'PersistentVolumeClaim "fid-data" is invalid: '
      .. "spec.resources.requests.storage: Forbidden: field can not be less "
      .. "than status.capacity")
    -- a class without allowVolumeExpansion: no growing (admission, 403)
    e = w.err(function()
      w.apply(pvc("fid-fixed", "fid-fixed", "2Gi"), "uphook")
    end)
    t.eq(e.code, 403)
    t.eq(e.message, 'persistentvolumeclaims "fid-fixed" is forbidden: only '
      .. "dynamically provisioned pvc can be resized and the storageclass "
      .. "that provisions the pvc must support resize")
    t.eq(w.get("PersistentVolumeClaim", "fid-fixed", NS)
           .spec.resources.requests.storage, "1Gi")
  end)

-- core ValidatePodUpdate (kubernetes/kubernetes@v1.32.3
-- pkg/apis/core/validation/validation.go): ValidateContainerUpdates
-- refuses adding or removing containers; then the spec, its updatable
-- fields (images, activeDeadlineSeconds, tolerations, ...) set to the old
-- values, must be as it was ("pod updates may not change fields other
-- than ...", followed by a cmp.Diff of the two specs).
case("a Pod's spec may not change but its images", function(w)
  local pod = { apiVersion = "v1", kind = "Pod",
    metadata = { name = "fid-pod", namespace = NS },
    spec = { containers = { { name = "c", image = "img:1" } } } }
  w.apply(pod, "uphook")
  pod.spec.containers[1].image = "img:2"
  t.eq(w.apply(pod, "uphook").spec.containers[1].image, "img:2")
  pod.spec.containers[1].env = { { name = "A", value = "1" } }
  local e = w.err(function() w.apply(pod, "uphook") end)
  t.eq(e.code, 422)
  t.match(e.message, '^Pod "fid%-pod" is invalid: spec: Forbidden: pod '
    .. "updates may not change fields other than `spec%.containers%[%*%]%."
    .. "image`,`spec%.initContainers%[%*%]%.image`,`spec%."
    .. "activeDeadlineSeconds`,`spec%.tolerations` %(only additions to "
    .. "existing tolerations%),`spec%.terminationGracePeriodSeconds` %(allow "
    .. "it to be set to 1 if it was previously negative%)\n  core%.PodSpec{")
  pod.spec.containers[1].env = nil
  pod.spec.containers[2] = { name = "d", image = "img:1" }
  refused(w, pod, 'Pod "fid-pod" is invalid: spec.containers: Forbidden: '
    .. "pod updates may not add or remove containers")
  t.eq(#w.get("Pod", "fid-pod", NS).spec.containers, 1)
  w.delete("Pod", "fid-pod", NS)
end)

-- storage ValidateVolumeAttachmentUpdate: "Spec is read-only" -- any
-- change is field.Invalid on spec (the real message prints the new spec
-- as Go's %#v of storage.VolumeAttachmentSpec, with pointers, so only
-- its shape is asserted).
case("a VolumeAttachment's spec is immutable", function(w)
  local va = { apiVersion = "storage.k8s.io/v1", kind = "VolumeAttachment",
    metadata = { name = "fidelity-va" },
    spec = { attacher = "fidelity.csi.example.com", nodeName = "n1",
      source = { persistentVolumeName = "pv-a" } } }
  w.apply(va, "kubectl")
  va.spec.nodeName = "n2"
  local e = w.err(function() w.apply(va, "uphook") end)
  t.eq(e.code, 422)
  t.match(e.message, '^VolumeAttachment%.storage%.k8s%.io "fidelity%-va" '
    .. 'is invalid: spec: Invalid value: .*: field is immutable$')
  w.delete("VolumeAttachment", "fidelity-va")
end)

-- batch validateJobSpecUpdate: ValidateImmutableField on completionMode
-- (and podFailurePolicy, backoffLimitPerIndex).
case("a Job's completionMode is immutable", function(w)
  local job = { apiVersion = "batch/v1", kind = "Job",
    metadata = { name = "imm-job", namespace = NS },
    spec = { completions = 2, completionMode = "NonIndexed",
      template = { spec = { restartPolicy = "Never",
        containers = { { name = "c", image = "img:1" } } } } } }
  w.apply(job, "kubectl")
  job.spec.completionMode = "Indexed"
  refused(w, job, 'Job.batch "imm-job" is invalid: spec.completionMode: '
    .. 'Invalid value: "Indexed": field is immutable')
end)

-- batch validateJobSpecUpdate -> validateCompletions: completions is
-- immutable for a NonIndexed Job; an Indexed Job's may change, but only
-- to its (new) parallelism (ElasticIndexedJob, GA in 1.31):
-- "can only be modified in tandem with spec.parallelism".
case("a Job's completions: immutable unless Indexed, with parallelism",
  function(w)
    local function job(name, mode, completions, parallelism)
      return { apiVersion = "batch/v1", kind = "Job",
        metadata = { name = name, namespace = NS },
        spec = { completions = completions, parallelism = parallelism,
          completionMode = mode,
          template = { spec = { restartPolicy = "Never",
            containers = { { name = "c", image = "img:1" } } } } } }
    end
    w.apply(job("imm-job-n", "NonIndexed", 2, 2), "kubectl")
    refused(w, job("imm-job-n", "NonIndexed", 3, 3), 'Job.batch "imm-job-n" '
      .. 'is invalid: spec.completions: Invalid value: 3: field is immutable')
    w.apply(job("imm-job-i", "Indexed", 2, 2), "kubectl")
    local o = w.apply(job("imm-job-i", "Indexed", 3, 3), "uphook")
    t.eq(o.spec.completions, 3)
    refused(w, job("imm-job-i", "Indexed", 4, 3), 'Job.batch "imm-job-i" is '
      .. 'invalid: spec.completions: Invalid value: 4: can only be modified '
      .. 'in tandem with spec.parallelism')
  end)
