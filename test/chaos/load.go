package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// StableNamespaces live for the whole load; churn namespaces (NamespacePrefix+"churn-<n>")
// come and go. The caller creates them before the load starts.
var StableNamespaces = []string{NamespacePrefix + "a", NamespacePrefix + "b"}

// pools are the object names per kind: a name is created, updated, deleted and created again
// (with a new UID) over the soak.
var pools = map[string]int{"ConfigMap": 8, "Secret": 5, "Service": 4, "Pod": 8}

var poolKinds = []string{"ConfigMap", "Secret", "Service", "Pod"}

var namePrefix = map[string]string{"ConfigMap": "cm", "Secret": "sec", "Service": "svc", "Pod": "pod"}

// LoadStats counts the load's operations.
type LoadStats struct {
	Creates, Updates, Deletes, NamespaceCreates, NamespaceDeletes, Errors atomic.Int64
	mu                                                                    sync.Mutex
	firstErrs                                                             []string
}

func (s *LoadStats) err(err error) {
	s.Errors.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.firstErrs) < 10 {
		s.firstErrs = append(s.firstErrs, err.Error())
	}
}

// FirstErrors returns up to 10 of the first failed calls' errors.
func (s *LoadStats) FirstErrors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.firstErrs...)
}

func (s *LoadStats) String() string {
	return fmt.Sprintf("%d creates, %d updates, %d deletes, %d namespaces created, %d deleted, %d failed calls",
		s.Creates.Load(), s.Updates.Load(), s.Deletes.Load(), s.NamespaceCreates.Load(), s.NamespaceDeletes.Load(), s.Errors.Load())
}

// Load creates, updates and deletes Pods, ConfigMaps, Secrets, Services and Namespaces in one
// tenant (NewLoad, Run). Every object it creates carries LabelLoad=ValueLoad, LabelGen and
// AnnotationNote, and lives in a namespace named NamespacePrefix*.
type Load struct {
	cs      kubernetes.Interface
	rng     *rand.Rand
	stats   *LoadStats
	gen     int
	churn   int
	churnNS []string
	period  time.Duration // mean time between two operations
}

// NewLoad returns the load of one tenant through cs, drawn from seed, with one operation about
// every period (uniform in [period/2, 3·period/2]), counted in stats (shared by several loads).
func NewLoad(cs kubernetes.Interface, seed uint64, period time.Duration, stats *LoadStats) *Load {
	return &Load{cs: cs, stats: stats, period: period, rng: rand.New(rand.NewPCG(seed, 1))}
}

// Run runs the load until ctx ends (see run).
func (l *Load) Run(ctx context.Context) { l.run(ctx) }

// run alternates object operations with namespace churn (a new churn namespace with a
// ConfigMap and a Pod about every 8 s, the one before it deleted) until ctx ends.
func (l *Load) run(ctx context.Context) {
	nextChurn := time.Now().Add(3 * time.Second)
	for ctx.Err() == nil {
		if time.Now().After(nextChurn) {
			nextChurn = time.Now().Add(time.Duration(6000+l.rng.IntN(4000)) * time.Millisecond)
			l.churnStep(ctx)
		}
		l.step(ctx)
		sleepCtx(ctx, l.period/2+time.Duration(l.rng.Int64N(int64(l.period)+1)))
	}
}

func (l *Load) churnStep(ctx context.Context) {
	l.churn++
	ns := fmt.Sprintf("%schurn-%d", NamespacePrefix, l.churn)
	if _, err := l.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: ns, Labels: map[string]string{LabelLoad: ValueLoad}}}, metav1.CreateOptions{}); err != nil {
		l.fail(ctx, err)
	} else {
		l.stats.NamespaceCreates.Add(1)
		l.churnNS = append(l.churnNS, ns)
		l.gen++
		l.create(ctx, "ConfigMap", ns, "cm-0")
		l.create(ctx, "Pod", ns, "pod-0")
	}
	if len(l.churnNS) > 1 {
		old := l.churnNS[0]
		l.churnNS = l.churnNS[1:]
		if err := l.cs.CoreV1().Namespaces().Delete(ctx, old, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			l.fail(ctx, err)
		} else {
			l.stats.NamespaceDeletes.Add(1)
		}
	}
}

// step picks a kind, a stable namespace and a name from the pool: a missing object is created,
// an existing one is updated (75%) or deleted (25%).
func (l *Load) step(ctx context.Context) {
	kind := poolKinds[l.rng.IntN(len(poolKinds))]
	ns := StableNamespaces[l.rng.IntN(len(StableNamespaces))]
	name := fmt.Sprintf("%s-%d", namePrefix[kind], l.rng.IntN(pools[kind]))
	l.gen++
	err := l.update(ctx, kind, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		l.create(ctx, kind, ns, name)
	case err != nil:
		l.fail(ctx, err)
	}
}

func (l *Load) fail(ctx context.Context, err error) {
	if ctx.Err() == nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
		l.stats.err(err)
	}
}

func (l *Load) meta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns,
		Labels:      map[string]string{LabelLoad: ValueLoad, LabelGen: fmt.Sprint(l.gen)},
		Annotations: map[string]string{AnnotationNote: fmt.Sprintf("generation %d", l.gen)}}
}

func (l *Load) servicePorts() []corev1.ServicePort {
	return []corev1.ServicePort{{Name: "http", Port: int32(80 + l.gen%5), TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}
}

// create creates kind ns/name at the current generation.
func (l *Load) create(ctx context.Context, kind, ns, name string) {
	om := l.meta(ns, name)
	var err error
	c := l.cs.CoreV1()
	switch kind {
	case "ConfigMap":
		_, err = c.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: om, Data: map[string]string{"gen": fmt.Sprint(l.gen)}}, metav1.CreateOptions{})
	case "Secret":
		_, err = c.Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: om, Data: map[string][]byte{"gen": []byte(fmt.Sprint(l.gen))}}, metav1.CreateOptions{})
	case "Service":
		_, err = c.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: om, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": fmt.Sprintf("web-%d", l.gen%3)}, Ports: l.servicePorts()}}, metav1.CreateOptions{})
	case "Pod":
		_, err = c.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: om, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: new(int64),
			Containers:                    []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		}}, metav1.CreateOptions{})
	}
	if err != nil {
		l.fail(ctx, err)
		return
	}
	l.stats.Creates.Add(1)
}

// update updates (75%) or deletes (25%) kind ns/name; it returns the NotFound error when the
// object does not exist.
func (l *Load) update(ctx context.Context, kind, ns, name string) error {
	del := l.rng.IntN(4) == 0
	c := l.cs.CoreV1()
	om := l.meta(ns, name)
	var err error
	switch kind {
	case "ConfigMap":
		var o *corev1.ConfigMap
		if o, err = c.ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		if del {
			err = c.ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &o.UID}})
			break
		}
		o.Labels, o.Annotations, o.Data = om.Labels, om.Annotations, map[string]string{"gen": fmt.Sprint(l.gen)}
		_, err = c.ConfigMaps(ns).Update(ctx, o, metav1.UpdateOptions{})
	case "Secret":
		var o *corev1.Secret
		if o, err = c.Secrets(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		if del {
			err = c.Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &o.UID}})
			break
		}
		o.Labels, o.Annotations, o.Data = om.Labels, om.Annotations, map[string][]byte{"gen": []byte(fmt.Sprint(l.gen))}
		_, err = c.Secrets(ns).Update(ctx, o, metav1.UpdateOptions{})
	case "Service":
		var o *corev1.Service
		if o, err = c.Services(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		if del {
			err = c.Services(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &o.UID}})
			break
		}
		o.Labels, o.Annotations = om.Labels, om.Annotations
		o.Spec.Selector, o.Spec.Ports = map[string]string{"app": fmt.Sprintf("web-%d", l.gen%3)}, l.servicePorts()
		_, err = c.Services(ns).Update(ctx, o, metav1.UpdateOptions{})
	case "Pod":
		var o *corev1.Pod
		if o, err = c.Pods(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		if !o.DeletionTimestamp.IsZero() {
			return nil // terminating: the syncer finishes it
		}
		if del {
			err = c.Pods(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &o.UID}})
			break
		}
		o.Labels, o.Annotations = om.Labels, om.Annotations
		_, err = c.Pods(ns).Update(ctx, o, metav1.UpdateOptions{})
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil // deleted between the Get and the write: nothing to do this step
		}
		return err
	}
	if del {
		l.stats.Deletes.Add(1)
	} else {
		l.stats.Updates.Add(1)
	}
	return nil
}
