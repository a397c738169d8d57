#!/usr/bin/env python3
"""deploy/: the Kubernetes manifests parse, are what kustomization.yaml lists, pass the
`restricted` Pod Security Standard's checks, and carry what docs/deploy.md says (the shard
from the pod's ordinal, stateless HTTP, a volume per pod); the ConfigMap's operator config
is one `sbxtrace mcp` accepts (with the Secret's tokens), and the router's nginx.conf is one
Debian's nginx accepts (`nginx -t`, with the cluster's DNS names replaced).

usage: test-manifests.py SOURCE_ROOT SBXTRACE_BIN      exit 77 without python3-yaml
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed (apt-get install python3-yaml; .ci/run does)")
    sys.exit(77)

ROOT, BIN = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
K8S = os.path.join(ROOT, "deploy", "k8s")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)
    return cond


# ---- parse, and the kustomization lists every file
docs = {}
for name in sorted(os.listdir(K8S)):
    if name.endswith(".yaml"):
        with open(os.path.join(K8S, name)) as f:
            docs[name] = [d for d in yaml.safe_load_all(f) if d is not None]
kust = docs.pop("kustomization.yaml")[0]
check(sorted(kust["resources"]) == sorted(docs), "kustomization.yaml lists exactly the manifests: %s vs %s" % (
    sorted(kust["resources"]), sorted(docs)))
objs = [d for v in docs.values() for d in v]
kinds = {}
for o in objs:
    check("apiVersion" in o and "kind" in o and "name" in o.get("metadata", {}), "object has apiVersion, kind, name: %r" % o)
    kinds.setdefault(o["kind"], []).append(o)
for k in ("Namespace", "ConfigMap", "Secret", "StatefulSet", "Service", "Deployment", "Ingress",
          "NetworkPolicy", "PodDisruptionBudget", "HorizontalPodAutoscaler"):
    check(k in kinds, "a %s is there" % k)
by = {(o["kind"], o["metadata"]["name"]): o for o in objs}

ns = kinds["Namespace"][0]
check(ns["metadata"]["labels"].get("pod-security.kubernetes.io/enforce") == "restricted",
      "the namespace enforces the restricted Pod Security Standard")

# ---- restricted Pod Security Standard (kubernetes.io/docs/concepts/security/pod-security-standards)
ALLOWED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                   "persistentVolumeClaim", "projected", "secret"}


def restricted(owner, pod):
    psc = pod.get("securityContext", {})
    name = "%s/%s" % (owner["kind"], owner["metadata"]["name"])
    for f in ("hostNetwork", "hostPID", "hostIPC"):
        check(not pod.get(f), "%s: no %s" % (name, f))
    for v in pod.get("volumes", []):
        types = set(v) - {"name"}
        check(types <= ALLOWED_VOLUMES, "%s: volume %s is of an allowed type (%s)" % (name, v["name"], types))
    check(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "%s: pod seccompProfile RuntimeDefault" % name)
    check(psc.get("runAsUser", 1) != 0, "%s: pod runAsUser is not 0" % name)
    for c in pod.get("initContainers", []) + pod["containers"]:
        sc = c.get("securityContext", {})
        cn = "%s container %s" % (name, c["name"])
        check(sc.get("allowPrivilegeEscalation") is False, "%s: allowPrivilegeEscalation false" % cn)
        check("ALL" in sc.get("capabilities", {}).get("drop", []), "%s: capabilities drop ALL" % cn)
        check(not set(sc.get("capabilities", {}).get("add", [])) - {"NET_BIND_SERVICE"}, "%s: no capability added" % cn)
        check(sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True, "%s: runAsNonRoot" % cn)
        check(sc.get("runAsUser", psc.get("runAsUser", 1)) != 0, "%s: runAsUser is not 0" % cn)
        check(sc.get("seccompProfile", psc.get("seccompProfile", {})).get("type") in ("RuntimeDefault", "Localhost"),
              "%s: seccompProfile RuntimeDefault" % cn)
        check(not sc.get("privileged"), "%s: not privileged" % cn)
        check(sc.get("readOnlyRootFilesystem") is True, "%s: read-only root file system" % cn)
        check(all("hostPort" not in p for p in c.get("ports", [])), "%s: no hostPort" % cn)
        check(sc.get("procMount", "Default") == "Default", "%s: default procMount" % cn)
        check(all(not k.startswith("sysctl") for k in psc), "%s: no sysctls" % cn)


for k in ("StatefulSet", "Deployment"):
    for o in kinds.get(k, []):
        restricted(o, o["spec"]["template"]["spec"])
        check(o["spec"]["template"]["spec"].get("automountServiceAccountToken") is False,
              "%s: no service account token" % o["metadata"]["name"])

# ---- the servers: shard from the ordinal, stateless, a volume each, routable
sts = by[("StatefulSet", "sbxtrace")]
c = sts["spec"]["template"]["spec"]["containers"][0]
args = c["args"]
check(args[:1] == ["mcp"] and "--http-stateless" in args, "sbxtrace mcp --http-stateless")
check("--shard" in args and args[args.index("--shard") + 1] == "s$(POD_INDEX)", "--shard s$(POD_INDEX)")
env = {e["name"]: e for e in c.get("env", [])}
check(env.get("POD_INDEX", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
      == "metadata.labels['apps.kubernetes.io/pod-index']", "POD_INDEX from the pod-index label")
check([t["metadata"]["name"] for t in sts["spec"].get("volumeClaimTemplates", [])] == ["data"],
      "a volume per pod (volumeClaimTemplates)")
check(any(m["name"] == "data" and m["mountPath"] == "/var/lib/sbxtrace" for m in c["volumeMounts"]),
      "the data volume at /var/lib/sbxtrace")
headless = by[("Service", sts["spec"]["serviceName"])]
check(headless["spec"].get("clusterIP") == "None", "the StatefulSet's Service is headless")
pod_labels = sts["spec"]["template"]["metadata"]["labels"]
for o in kinds["Service"] + kinds["PodDisruptionBudget"] + kinds["NetworkPolicy"]:
    sel = o["spec"].get("selector", o["spec"].get("podSelector", {}))
    sel = sel.get("matchLabels", sel)
    check(sel and all(k in pod_labels or k == "app.kubernetes.io/component" for k in sel),
          "%s %s selects by our labels" % (o["kind"], o["metadata"]["name"]))
hpa = kinds["HorizontalPodAutoscaler"][0]
check(hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "sbxtrace"},
      "the HPA scales the StatefulSet")
check(hpa["spec"]["behavior"]["scaleDown"].get("selectPolicy") == "Disabled",
      "the HPA does not scale down (sessions do not migrate)")
check(by[("Ingress", "sbxtrace")]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"]
      == "sbxtrace-router", "the Ingress sends /mcp to the router")

# ---- the Containerfile's users are the pods' users
with open(os.path.join(ROOT, "deploy", "Containerfile")) as f:
    cf = f.read()
users = re.findall(r"^USER (\d+):(\d+)$", cf, re.M)
check(users == [("10001", "10001"), ("10101", "10101")], "Containerfile runs as 10001 and 10101: %s" % users)
check(sts["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == 10001, "server runAsUser 10001")
router = by[("Deployment", "sbxtrace-router")]
check(router["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == 10101, "router runAsUser 10101")

tmp = tempfile.mkdtemp(prefix="sbxtrace-deploy-test-")
try:
    # ---- the operator config loads, with the Secret's tokens
    secret = by[("Secret", "sbxtrace-tokens")]["stringData"]
    toml = by[("ConfigMap", "sbxtrace-config")]["data"]["mcp.toml"]
    os.makedirs(os.path.join(tmp, "secrets"))
    for k, v in secret.items():
        with open(os.path.join(tmp, "secrets", k), "w") as f:
            f.write(v)
    toml = toml.replace("/run/secrets/sbxtrace/", os.path.join(tmp, "secrets") + "/")
    toml = toml.replace("/var/lib/sbxtrace/sessions", os.path.join(tmp, "data"))
    check(re.findall(r'token_file = "[^"]*/([^/"]+)"', toml) == sorted(secret) or
          sorted(re.findall(r'token_file = "[^"]*/([^/"]+)"', toml)) == sorted(secret),
          "every tenant's token_file is a key of the Secret")
    with open(os.path.join(tmp, "mcp.toml"), "w") as f:
        f.write(toml)
    p = subprocess.Popen([BIN, "mcp", "--http", "127.0.0.1:0", "--config", os.path.join(tmp, "mcp.toml"),
                          "--shard", "s0", "--http-stateless"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    check(line.startswith("listening on http://127.0.0.1:"), "sbxtrace mcp accepts the ConfigMap's config: %r" % line)
    p.terminate()
    p.wait(10)

    # ---- the router's nginx.conf passes nginx -t
    ng = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if ng:
        conf = by[("ConfigMap", "sbxtrace-router")]["data"]["nginx.conf"]
        conf = re.sub(r"resolver [^;]*;", "resolver 127.0.0.1;", conf)
        conf = conf.replace("sbxtrace-any.sbxtrace.svc.cluster.local", "127.0.0.1")
        conf = conf.replace("/tmp/", tmp + "/").replace("pid /tmp/nginx.pid", "pid %s/nginx.pid" % tmp)
        conf = conf.replace("listen 8080;", "listen 127.0.0.1:8080;")
        for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.makedirs(os.path.join(tmp, d), exist_ok=True)
        with open(os.path.join(tmp, "nginx.conf"), "w") as f:
            f.write(conf)
        r = subprocess.run([ng, "-t", "-p", tmp, "-c", os.path.join(tmp, "nginx.conf"), "-e", "stderr"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        check(r.returncode == 0, "nginx -t accepts the router's nginx.conf: %s" % r.stdout.strip())
    else:
        print("note: nginx is not installed; the router's config was not checked with nginx -t")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d objects in %d files; %s" % (len(objs), len(docs), "FAIL" if failures else "PASS"))
sys.exit(1 if failures else 0)
