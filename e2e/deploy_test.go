package e2e

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/redlock-proxy/redlock-proxy/config"
	"github.com/redlock-proxy/redlock-proxy/internal/app"
	"github.com/redlock-proxy/redlock-proxy/internal/harness"
	"github.com/redlock-proxy/redlock-proxy/internal/redistest"
)

// There is no container engine or cluster here: these tests parse the
// deployment files and run the binary's configuration the way they use it.

func yamlDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var d map[string]any
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			return docs
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, d)
	}
}

// dig walks maps and lists: dig(x, "spec", "containers", 0, "args").
func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("no %q in %v", k, v)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("no [%d] in %v", k, v)
			}
			v = l[k]
		}
	}
	return v
}

func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestComposeFile(t *testing.T) {
	compose := yamlDocs(t, "deploy/docker-compose.yml")[0]
	services := dig(t, compose, "services").(map[string]any)
	for _, name := range []string{"redis1", "redis2", "redis3", "redis4", "redis5", "proxy1", "proxy2"} {
		if services[name] == nil {
			t.Fatalf("service %s missing", name)
		}
	}
	env := map[string]string{}
	for k, v := range dig(t, services, "proxy1", "environment").(map[string]any) {
		env[k] = v.(string)
	}
	cfg, err := config.Load(imageArgs(t), func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("proxy1's environment does not load: %v", err)
	}
	if len(cfg.Backends) != 5 || cfg.HTTPListen == "" {
		t.Fatalf("proxy1 config: %d backends, http %q", len(cfg.Backends), cfg.HTTPListen)
	}
	if ports := dig(t, services, "proxy2", "ports").([]any); !strings.HasSuffix(ports[0].(string), ":"+port(t, cfg.Listen)) {
		t.Fatalf("proxy2 publishes %v, but listens on %s", ports, cfg.Listen)
	}
	// Masters keep their data across down/up; proxies wait for healthy masters.
	for i := 1; i <= 5; i++ {
		name := "redis" + strconv.Itoa(i)
		vols, _ := dig(t, services, name, "volumes").([]any)
		if _, declared := dig(t, compose, "volumes").(map[string]any)[name]; len(vols) != 1 || !strings.HasPrefix(vols[0].(string), name+":") || !declared {
			t.Fatalf("%s has no named data volume: %v", name, vols)
		}
		if dig(t, services, "proxy1", "depends_on", name, "condition") != "service_healthy" {
			t.Fatalf("proxy1 does not wait for %s to be healthy", name)
		}
	}
}

// imageArgs are the image's default arguments (its CMD), which apply when a
// container is given none.
func imageArgs(t *testing.T) []string {
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "CMD "); ok {
			var args []string
			if err := yaml.Unmarshal([]byte(rest), &args); err != nil {
				t.Fatalf("CMD %s: %v", rest, err)
			}
			return args
		}
	}
	t.Fatal("the Dockerfile has no CMD")
	return nil
}

func TestDockerfileHealthCheck(t *testing.T) {
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	for _, want := range []string{"USER 65532:65532", `"-probe", "http://127.0.0.1:9121/readyz"`, "EXPOSE 6380 9121", "CGO_ENABLED=0"} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	// No ENV for settings: it would silently override a mounted config file.
	if strings.Contains(df, "ENV REDLOCK_") {
		t.Errorf("the Dockerfile sets REDLOCK_* in ENV, which overrides a mounted config file")
	}
	// Started without backends, the image refuses to serve in-memory locks
	// on 0.0.0.0 and says how to give backends (issue 22).
	if _, err := config.Load(imageArgs(t), func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "REDLOCK_BACKENDS=") {
		t.Errorf("the image's default arguments without backends load (%v); want them refused, saying how to give backends", err)
	}
	env := map[string]string{"REDLOCK_BACKENDS": "r1:6379,r2:6379,r3:6379"} // as the README's docker run gives them
	cfg, err := config.Load(imageArgs(t), func(k string) string { return env[k] }, io.Discard)
	if err != nil || cfg.HTTPListen != "0.0.0.0:9121" || !strings.HasPrefix(cfg.Listen, "0.0.0.0:") || cfg.LogFormat != "json" {
		t.Errorf("the image's default arguments give %+v, %v", cfg, err)
	}
	if ignore, err := os.ReadFile(".dockerignore"); err != nil || !strings.Contains(string(ignore), ".git") {
		t.Errorf(".dockerignore missing or without .git: %v", err)
	}
}

// TestKubernetesManifests loads the ConfigMap's config with the Deployment's
// args, checks the probes and Service against it, then runs that very
// configuration (backends swapped for local redis-servers, without their
// password) and asks /healthz and /readyz the way the probes and the image's
// health check do.
func TestKubernetesManifests(t *testing.T) {
	kinds := map[string]map[string]any{}
	for _, f := range []string{"deploy/k8s/redis.yaml", "deploy/k8s/proxy.yaml"} {
		for _, d := range yamlDocs(t, f) {
			kinds[d["kind"].(string)+"/"+dig(t, d, "metadata", "name").(string)] = d
		}
	}
	dep := kinds["Deployment/redlock-proxy"]
	container := dig(t, dep, "spec", "template", "spec", "containers", 0)
	for _, c := range []any{container, dig(t, kinds["StatefulSet/redis"], "spec", "template", "spec", "containers", 0)} {
		image := dig(t, c, "image").(string)
		if strings.HasSuffix(image, ":latest") || !strings.Contains(image, ":") || dig(t, c, "imagePullPolicy") == nil {
			t.Errorf("image %q: pin a tag and set imagePullPolicy", image)
		}
		if dig(t, c, "resources", "requests", "memory") == nil || dig(t, c, "resources", "limits", "memory") == nil {
			t.Errorf("container of image %q has no memory request and limit", image)
		}
	}
	for _, pdb := range []string{"PodDisruptionBudget/redlock-proxy", "PodDisruptionBudget/redis"} {
		if kinds[pdb] == nil {
			t.Errorf("%s missing", pdb)
		}
	}
	if dig(t, dep, "spec", "template", "spec", "securityContext", "runAsUser") != 65532 {
		t.Errorf("the Deployment does not run as the image's numeric user")
	}
	typed := loadK8s(t)
	cfg := k8sProxyConfig(t, typed, containerEnv(t, typed.deployments["redlock-proxy"].Spec.Template.Spec.Containers[0]))
	if n := dig(t, kinds["StatefulSet/redis"], "spec", "replicas").(int); n != len(cfg.Backends) {
		t.Fatalf("%d redis replicas but %d backends configured", n, len(cfg.Backends))
	}
	ports := map[string]int{}
	for _, p := range dig(t, container, "ports").([]any) {
		ports[dig(t, p, "name").(string)] = dig(t, p, "containerPort").(int)
	}
	if dig(t, container, "readinessProbe", "httpGet", "path") != "/healthz" || dig(t, container, "livenessProbe", "httpGet", "path") != "/healthz" {
		t.Fatal("probes must use /healthz (serving; see TestKubernetesAvailability)")
	}
	if p := port(t, cfg.HTTPListen); p != itoa(ports["http"]) {
		t.Fatalf("http_listen port %s, container port http %d", p, ports["http"])
	}
	if p := port(t, cfg.Listen); p != itoa(ports["redis"]) || dig(t, kinds["Service/redlock-proxy"], "spec", "ports", 0, "targetPort") != "redis" {
		t.Fatalf("listen port %s, container port redis %d", p, ports["redis"])
	}

	cfg.Backends = nil
	for _, addr := range redistest.Addrs(redistest.Start(t, 5)) {
		cfg.Backends = append(cfg.Backends, config.Backend{Addr: addr})
	}
	cfg.Listen, cfg.HTTPListen, cfg.Quarantine = "127.0.0.1:0", "127.0.0.1:0", false
	a, err := app.Start(cfg, app.NewLogger(cfg.LogFormat, io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ln, err := app.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.Server.Serve(ln) }()
	harness.Eventually(t, "serving", a.Server.Serving)
	for _, path := range []string{"/healthz", "/readyz"} { // the probes', the image's health check's
		if code := app.Probe("http://" + a.HTTP.Addr().String() + path); code != 0 {
			t.Fatalf("a probe of %s on this configuration exits %d", path, code)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
