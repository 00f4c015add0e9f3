package e2e

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/redlock-proxy/redlock-proxy/config"
)

// The Kubernetes manifests are decoded strictly into the Kubernetes API's
// own Go types (k8s.io/api, the types the API server decodes into): an
// unknown or misspelt field, a duplicate key or a wrong type fails, as
// `kubectl apply --validate=strict` would, without a cluster and without
// vendoring third-party JSON schemas.

// k8sManifests are the objects of deploy/k8s, by "Kind/name".
type k8sManifests struct {
	configMaps   map[string]*corev1.ConfigMap
	deployments  map[string]*appsv1.Deployment
	statefulSets map[string]*appsv1.StatefulSet
	services     map[string]*corev1.Service
	pdbs         map[string]*policyv1.PodDisruptionBudget
	netpols      map[string]*networkingv1.NetworkPolicy
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

func loadK8s(t *testing.T) *k8sManifests {
	t.Helper()
	m := &k8sManifests{map[string]*corev1.ConfigMap{}, map[string]*appsv1.Deployment{}, map[string]*appsv1.StatefulSet{},
		map[string]*corev1.Service{}, map[string]*policyv1.PodDisruptionBudget{}, map[string]*networkingv1.NetworkPolicy{}}
	for _, f := range []string{"deploy/k8s/redis.yaml", "deploy/k8s/proxy.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range docSeparator.Split(string(data), -1) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			var obj interface{ GetName() string }
			switch tm.APIVersion + " " + tm.Kind {
			case "v1 ConfigMap":
				obj = &corev1.ConfigMap{}
			case "apps/v1 Deployment":
				obj = &appsv1.Deployment{}
			case "apps/v1 StatefulSet":
				obj = &appsv1.StatefulSet{}
			case "v1 Service":
				obj = &corev1.Service{}
			case "policy/v1 PodDisruptionBudget":
				obj = &policyv1.PodDisruptionBudget{}
			case "networking.k8s.io/v1 NetworkPolicy":
				obj = &networkingv1.NetworkPolicy{}
			default:
				t.Fatalf("%s document %d: unexpected %q %q", f, i, tm.APIVersion, tm.Kind)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatalf("%s document %d (%s): strict decoding: %v", f, i, tm.Kind, err)
			}
			switch o := obj.(type) {
			case *corev1.ConfigMap:
				m.configMaps[o.Name] = o
			case *appsv1.Deployment:
				m.deployments[o.Name] = o
			case *appsv1.StatefulSet:
				m.statefulSets[o.Name] = o
			case *corev1.Service:
				m.services[o.Name] = o
			case *policyv1.PodDisruptionBudget:
				m.pdbs[o.Name] = o
			case *networkingv1.NetworkPolicy:
				m.netpols[o.Name] = o
			}
		}
	}
	if m.deployments["redlock-proxy"] == nil || m.statefulSets["redis"] == nil || m.configMaps["redlock-proxy"] == nil {
		t.Fatal("deploy/k8s lacks the redlock-proxy Deployment and ConfigMap or the redis StatefulSet")
	}
	return m
}

// containerEnv is a container's environment as the kubelet builds it:
// $(VAR) expanded from the variables before it, a Secret's value standing
// in as "secret-NAME-KEY".
func containerEnv(t *testing.T, c corev1.Container) map[string]string {
	t.Helper()
	env := map[string]string{}
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			s := e.ValueFrom.SecretKeyRef
			env[e.Name] = "secret-" + s.Name + "-" + s.Key
		case e.ValueFrom != nil:
			t.Fatalf("container %s: env %s from something other than a Secret", c.Name, e.Name)
		default:
			env[e.Name] = ref.ReplaceAllStringFunc(e.Value, func(m string) string {
				if v, ok := env[m[2:len(m)-1]]; ok {
					return v
				}
				return m
			})
		}
	}
	return env
}

// TestKubernetesSecurity: what SECURITY.md asks of a deployment, in deploy/k8s.
func TestKubernetesSecurity(t *testing.T) {
	m := loadK8s(t)
	proxyPod, redisPod := m.deployments["redlock-proxy"].Spec.Template, m.statefulSets["redis"].Spec.Template
	proxy, redis := proxyPod.Spec.Containers[0], redisPod.Spec.Containers[0]

	// A missing Secret must stop the pod (CreateContainerConfigError), never
	// start it without a password.
	for _, c := range []corev1.Container{proxy, redis} {
		for _, e := range c.Env {
			if s := e.ValueFrom; s != nil && s.SecretKeyRef != nil && s.SecretKeyRef.Optional != nil && *s.SecretKeyRef.Optional {
				t.Errorf("container %s: %s comes from an optional Secret: without it the container runs unauthenticated", c.Name, e.Name)
			}
		}
	}
	proxyEnv, redisEnv := containerEnv(t, proxy), containerEnv(t, redis)
	if !strings.HasPrefix(proxyEnv["REDLOCK_REQUIREPASS"], "secret-") {
		t.Errorf("the proxy's REDLOCK_REQUIREPASS is %q; want it from a Secret", proxyEnv["REDLOCK_REQUIREPASS"])
	}

	// The backends require a password, and the proxy sends it to each.
	args := strings.Join(redis.Args, " ")
	pass := ""
	if i := strings.Index(args, "--requirepass $("); i >= 0 {
		name := strings.SplitN(args[i+len("--requirepass $("):], ")", 2)[0]
		pass = redisEnv[name]
	}
	if !strings.HasPrefix(pass, "secret-") {
		t.Fatalf("redis runs with args %q: want --requirepass $(VAR) with VAR from a Secret", args)
	}
	cfg := k8sProxyConfig(t, m, proxyEnv)
	if len(cfg.Backends) == 0 {
		t.Fatal("the proxy has no backends")
	}
	for _, b := range cfg.Backends {
		if b.Password != pass {
			t.Errorf("the proxy reaches backend %s with password %q; redis requires %q", b.Addr, b.Password, pass)
		}
	}
	if *m.statefulSets["redis"].Spec.Replicas != int32(len(cfg.Backends)) {
		t.Errorf("%d redis replicas, %d backends", *m.statefulSets["redis"].Spec.Replicas, len(cfg.Backends))
	}
	// The readiness probe runs in the redis container: it must authenticate.
	if p := redis.ReadinessProbe; p == nil || p.Exec == nil || !strings.Contains(strings.Join(p.Exec.Command, " "), "REDISCLI_AUTH") && redisEnv["REDISCLI_AUTH"] == "" {
		t.Errorf("redis's readiness probe does not authenticate (REDISCLI_AUTH)")
	}

	// Only the proxies reach the backends: a client writing to a backend
	// bypasses the quorum.
	isolated := false
	for _, np := range m.netpols {
		if !selects(np.Spec.PodSelector, redisPod.Labels) {
			continue
		}
		isolated = len(np.Spec.PolicyTypes) > 0 && np.Spec.PolicyTypes[0] == networkingv1.PolicyTypeIngress
		for _, rule := range np.Spec.Ingress {
			for _, from := range rule.From {
				if from.PodSelector == nil || from.NamespaceSelector != nil || from.IPBlock != nil || !selects(*from.PodSelector, proxyPod.Labels) || selects(*from.PodSelector, map[string]string{"app": "client"}) {
					t.Errorf("NetworkPolicy %s lets in %+v, not only the proxies", np.Name, from)
				}
			}
			if len(rule.From) == 0 {
				t.Errorf("NetworkPolicy %s has an ingress rule from anywhere", np.Name)
			}
		}
	}
	if !isolated {
		t.Error("no NetworkPolicy isolates the redis pods (ingress from the proxies only)")
	}
}

// selects reports whether a label selector (matchLabels only) picks labels.
func selects(s metav1.LabelSelector, labels map[string]string) bool {
	if len(s.MatchExpressions) > 0 || len(s.MatchLabels) == 0 {
		return false
	}
	for k, v := range s.MatchLabels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestKubernetesAvailability: quorum loss answers NOQUORUM instead of
// emptying the Service, the replicas spread over nodes, and a rolling
// update drains a replica before it stops.
func TestKubernetesAvailability(t *testing.T) {
	m := loadK8s(t)
	dep := m.deployments["redlock-proxy"]
	pod := dep.Spec.Template.Spec
	proxy := pod.Containers[0]
	if p := proxy.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Errorf("readiness probe %+v: want /healthz (serving), not /readyz: on quorum loss every replica would leave the Service and clients get connection errors instead of NOQUORUM", p)
	}
	spread := false
	for _, c := range pod.TopologySpreadConstraints {
		spread = spread || c.TopologyKey == "kubernetes.io/hostname" && selects(*c.LabelSelector, dep.Spec.Template.Labels)
	}
	if a := pod.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, term := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			spread = spread || term.PodAffinityTerm.TopologyKey == "kubernetes.io/hostname"
		}
		for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			spread = spread || term.TopologyKey == "kubernetes.io/hostname"
		}
	}
	if !spread {
		t.Error("the proxy replicas are not spread over nodes (topologySpreadConstraints or podAntiAffinity on kubernetes.io/hostname)")
	}
	var delay time.Duration
	if l := proxy.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
		delay = time.Duration(l.PreStop.Sleep.Seconds) * time.Second
	}
	if delay < 3*time.Second {
		t.Fatalf("preStop sleep %v: want a few seconds for the endpoint removal to reach every node before SIGTERM", delay)
	}
	cfg := k8sProxyConfig(t, m, containerEnv(t, proxy))
	if grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second; grace <= delay+cfg.ShutdownGrace {
		t.Errorf("terminationGracePeriodSeconds %v <= preStop %v + shutdown_grace %v: the kubelet kills the proxy mid-shutdown", grace, delay, cfg.ShutdownGrace)
	}
	readme, err := os.ReadFile("deploy/README.md")
	if err != nil || !strings.Contains(string(readme), "docker build") || !strings.Contains(string(readme), "docker push") {
		t.Errorf("deploy/README.md (%v) must say the image is built and pushed by the user", err)
	}
	if !strings.Contains(fmt.Sprint(proxy.Image), "/") {
		t.Errorf("image %q names no registry: the user pushes the image they built to theirs", proxy.Image)
	}
}

// k8sProxyConfig loads the proxy's configuration the way its pod does: the
// Deployment's args, the ConfigMap's config.yaml mounted where they say, and
// the container's environment.
func k8sProxyConfig(t *testing.T, m *k8sManifests, env map[string]string) config.Config {
	t.Helper()
	dep := m.deployments["redlock-proxy"].Spec.Template.Spec
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(m.configMaps["redlock-proxy"].Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	mount := ""
	for _, vm := range dep.Containers[0].VolumeMounts {
		if vm.Name == "config" {
			mount = vm.MountPath + "/config.yaml"
		}
	}
	var args []string
	for _, a := range dep.Containers[0].Args {
		args = append(args, strings.Replace(a, mount, path, 1))
	}
	cfg, err := config.Load(args, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("the Deployment's args, env and ConfigMap do not load: %v", err)
	}
	return cfg
}
