package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/argoproj/notifications-engine/pkg/api"
	"github.com/argoproj/notifications-engine/pkg/services"
	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/cmd/webapp-notifier/notifier"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/yaml"
)

// webapps is the WebApp resource the notifier watches.
var webapps = schema.GroupVersionResource{Group: webappv1.Group, Version: webappv1.Version, Resource: "webapps"}

// Main is the notifier's process: NewMain, ParseFlags, then Run until its context ends.
type Main struct {
	// Config is set by NewMain to the defaults and by ParseFlags from flags and environment.
	Config Config
	// Logger writes JSON lines to stderr; ParseFlags sets its level.
	Logger *slog.Logger
	// Registry holds the metrics /metrics serves.
	Registry *prometheus.Registry
	// RestConfig, when set, is used rather than Config.Kubeconfig (tests).
	RestConfig *rest.Config

	stderr io.Writer
}

// NewMain returns a Main with the default configuration, logging JSON to stderr.
func NewMain(stderr io.Writer) *Main {
	return &Main{Config: defaultConfig(), stderr: stderr, Logger: slog.New(slog.NewJSONHandler(stderr, nil))}
}

// Run watches WebApps and tells their transitions until ctx ends (nil) or leadership is lost
// (an error: the pod restarts and stands for election again).
func (m *Main) Run(ctx context.Context) error {
	c := m.Config
	// notifications-engine logs through logrus: JSON too, and only warnings (its debug logs
	// requests, whose URL may hold a token).
	logrus.SetOutput(m.stderr)
	logrus.SetFormatter(&logrus.JSONFormatter{})
	logrus.SetLevel(logrus.WarnLevel)
	// Its HTTP client (go-retryablehttp) logs every request's URL through the standard log,
	// and a URL may hold a token (a Slack incoming webhook's): those lines are dropped, and
	// the rest have the Secret's values removed.
	var secrets corelisters.SecretLister
	log.SetFlags(0)
	log.SetOutput(stdLog{w: m.stderr, redact: func(s string) string {
		if secrets == nil {
			return s
		}
		return redact(s, secrets, c.Namespace, c.Secret)
	}})

	rc := m.RestConfig
	if rc == nil {
		var err error
		if rc, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
			return fmt.Errorf("kubeconfig: %w", err)
		}
	}
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "webapp-notifier"
	rc.QPS, rc.Burst = float32(c.KubeQPS), c.KubeBurst
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	if m.Registry == nil {
		m.Registry = prometheus.NewRegistry()
		m.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	metrics := notifier.NewMetrics(m.Registry)

	// The platform's ConfigMap and Secret, each watched by name alone (the Role grants those
	// names and no other).
	byName := func(name string) informers.SharedInformerOption {
		return informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		})
	}
	cmFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(c.Namespace), byName(c.ConfigMap))
	secretFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(c.Namespace), byName(c.Secret))
	cmInformer := cmFactory.Core().V1().ConfigMaps().Informer()
	secretInformer := secretFactory.Core().V1().Secrets().Informer()
	secrets = corelisters.NewSecretLister(secretInformer.GetIndexer())
	factory := api.NewFactory(api.Settings{
		ConfigMapName: c.ConfigMap, SecretName: c.Secret, InitGetVars: initGetVars,
	}, c.Namespace, secretInformer, cmInformer)

	n := &notifier.Notifier{
		Client: client, Namespace: c.Namespace, Instance: c.Identity, Logger: m.Logger, Metrics: metrics,
		GetAPI: factory.GetAPI,
		Redact: func(s string) string { return redact(s, secrets, c.Namespace, c.Secret) },
	}

	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](c.RetryMin, c.RetryMax),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "webapps"})
	defer queue.ShutDown()
	wf := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	wInformer := wf.ForResource(webapps).Informer()
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	if _, err := wInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				if err := n.Delete(ctx, u.GetUID()); err != nil {
					m.Logger.Warn("record of a deleted WebApp not deleted", "webapp", u.GetNamespace()+"/"+u.GetName(), "error", err.Error())
				}
			}
		},
	}); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if c.MetricsAddr != "" {
		ln, err := net.Listen("tcp", c.MetricsAddr)
		if err != nil {
			return fmt.Errorf("listen on %s for metrics: %w", c.MetricsAddr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		m.Logger.Info("metrics", "addr", ln.Addr().String())
	}
	cmFactory.Start(ctx.Done())
	secretFactory.Start(ctx.Done())
	wf.Start(ctx.Done())

	lead := func(ctx context.Context) {
		if !cache.WaitForCacheSync(ctx.Done(), wInformer.HasSynced, cmInformer.HasSynced, secretInformer.HasSynced) {
			return
		}
		m.Logger.Info("telling WebApps", "identity", c.Identity, "workers", c.Workers)
		var wg sync.WaitGroup
		for range c.Workers {
			wg.Go(func() {
				for m.work(ctx, queue, wInformer.GetIndexer(), n) {
				}
			})
		}
		<-ctx.Done()
		queue.ShutDown()
		wg.Wait()
	}
	if !c.LeaderElect {
		lead(ctx)
		return nil
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: c.LeaseName, Namespace: c.Namespace},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity},
	}
	lost := errors.New("leadership lost")
	var result error
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock: lock, ReleaseOnCancel: true, Name: c.LeaseName,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: lead,
			OnStoppedLeading: func() {
				if ctx.Err() == nil {
					result = lost
				}
			},
		},
	})
	return result
}

// work tells one WebApp from the queue; false once the queue is shut down.
func (m *Main) work(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], index cache.Indexer, n *notifier.Notifier) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	obj, exists, err := index.GetByKey(key)
	if err != nil || !exists {
		queue.Forget(key)
		return true
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		queue.Forget(key)
		return true
	}
	w, raw, err := notifier.WebApp(u)
	if err != nil {
		m.Logger.Warn("WebApp unreadable: nothing told", "error", err.Error())
		queue.Forget(key)
		return true
	}
	if err := n.Sync(ctx, w, raw); err != nil {
		if !errors.Is(err, notifier.ErrPending) {
			m.Logger.Warn("WebApp not told: retried with backoff", "webapp", key, "error", err.Error())
		}
		queue.AddRateLimited(key)
		return true
	}
	queue.Forget(key)
	return true
}

// initGetVars gives templates and triggers, beside what the notifier passes (webapp,
// transition), the ConfigMap's context: a YAML map of strings (context.dashboard, …).
func initGetVars(_ *api.Config, cm *corev1.ConfigMap, _ *corev1.Secret) (api.GetVars, error) {
	ctxVars := map[string]string{}
	if s := cm.Data["context"]; s != "" {
		if err := yaml.Unmarshal([]byte(s), &ctxVars); err != nil {
			return nil, fmt.Errorf("ConfigMap %s: context: %w", cm.Name, err)
		}
	}
	return func(obj map[string]any, _ services.Destination) map[string]any {
		out := make(map[string]any, len(obj)+1)
		for k, v := range obj {
			out[k] = v
		}
		out["context"] = ctxVars
		return out
	}, nil
}

// redact replaces every value of the Secret in s with "***".
func redact(s string, secrets corelisters.SecretLister, namespace, name string) string {
	sec, err := secrets.Secrets(namespace).Get(name)
	if err != nil {
		return s
	}
	for _, v := range sec.Data {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, string(v), "***")
		}
	}
	return s
}

// stdLog is the standard log's output: its [DEBUG] lines dropped (they name URLs), the rest
// redacted.
type stdLog struct {
	w      io.Writer
	redact func(string) string
}

func (l stdLog) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), "[DEBUG]") {
		return len(p), nil
	}
	_, err := io.WriteString(l.w, l.redact(string(p)))
	return len(p), err
}
