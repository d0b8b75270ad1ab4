package restart_test

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// Every object the load creates carries labelTest=valueTest and lives in a namespace named
// nsPrefix*; the convergence check looks only at those.
const (
	labelTest = "killtest"
	valueTest = "obj"
	labelGen  = "killtest-gen"
	annNote   = "killtest-note" // a plain key: the built-in metadata allowlist copies it
	nsPrefix  = "kt-"
)

// Namespaces that live for the whole test; churn namespaces (nsPrefix+"churn-<n>") come and go.
var stableNamespaces = []string{nsPrefix + "a", nsPrefix + "b"}

// Pools of object names per kind: a name is created, updated, deleted and created again (with a
// new UID) over the run.
var pools = map[string]int{"ConfigMap": 10, "Secret": 6, "Service": 5, "Pod": 10}

var poolKinds = []string{"ConfigMap", "Secret", "Service", "Pod"}

// loadStats counts the load's operations.
type loadStats struct {
	creates, updates, deletes, nsCreates, nsDeletes, errors atomic.Int64
	mu                                                      sync.Mutex
	lastErrs                                                []string
}

func (s *loadStats) err(err error) {
	s.errors.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lastErrs) < 10 {
		s.lastErrs = append(s.lastErrs, err.Error())
	}
}

func (s *loadStats) String() string {
	return fmt.Sprintf("%d creates, %d updates, %d deletes, %d namespaces created, %d deleted, %d failed calls",
		s.creates.Load(), s.updates.Load(), s.deletes.Load(), s.nsCreates.Load(), s.nsDeletes.Load(), s.errors.Load())
}

// tenantLoad creates, updates and deletes objects in one tenant until ctx ends.
type tenantLoad struct {
	cs    kubernetes.Interface
	rng   *rand.Rand
	stats *loadStats
	gen   int
}

// run alternates object operations (every 80-250 ms) with namespace churn (a new churn
// namespace with a ConfigMap and a Pod about every 8 s, the older one deleted).
func (l *tenantLoad) run(ctx context.Context) {
	churn := 0
	nextChurn := time.Now().Add(3 * time.Second)
	var churnNS []string
	for ctx.Err() == nil {
		if time.Now().After(nextChurn) {
			nextChurn = time.Now().Add(time.Duration(6000+l.rng.Intn(4000)) * time.Millisecond)
			churn++
			ns := fmt.Sprintf("%schurn-%d", nsPrefix, churn)
			if _, err := l.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
				Name: ns, Labels: map[string]string{labelTest: valueTest}}}, metav1.CreateOptions{}); err != nil {
				l.fail(ctx, err)
			} else {
				l.stats.nsCreates.Add(1)
				churnNS = append(churnNS, ns)
				l.gen++
				l.create(ctx, "ConfigMap", ns, "cm-0")
				l.create(ctx, "Pod", ns, "pod-0")
			}
			if len(churnNS) > 1 {
				old := churnNS[0]
				churnNS = churnNS[1:]
				if err := l.cs.CoreV1().Namespaces().Delete(ctx, old, metav1.DeleteOptions{}); err != nil {
					l.fail(ctx, err)
				} else {
					l.stats.nsDeletes.Add(1)
				}
			}
		}
		l.step(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(80+l.rng.Intn(170)) * time.Millisecond):
		}
	}
}

// step picks a kind, a stable namespace and a name from the pool: a missing object is created,
// an existing one is updated (75%) or deleted (25%).
func (l *tenantLoad) step(ctx context.Context) {
	kind := poolKinds[l.rng.Intn(len(poolKinds))]
	ns := stableNamespaces[l.rng.Intn(len(stableNamespaces))]
	name := fmt.Sprintf("%s-%d", map[string]string{"ConfigMap": "cm", "Secret": "sec", "Service": "svc", "Pod": "pod"}[kind], l.rng.Intn(pools[kind]))
	l.gen++
	err := l.update(ctx, kind, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		l.create(ctx, kind, ns, name)
	case err != nil:
		l.fail(ctx, err)
	}
}

func (l *tenantLoad) fail(ctx context.Context, err error) {
	if ctx.Err() == nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
		l.stats.err(err)
	}
}

func (l *tenantLoad) labels() map[string]string {
	return map[string]string{labelTest: valueTest, labelGen: fmt.Sprint(l.gen)}
}

func (l *tenantLoad) annotations() map[string]string {
	return map[string]string{annNote: fmt.Sprintf("generation %d", l.gen)}
}

func (l *tenantLoad) servicePorts() []corev1.ServicePort {
	return []corev1.ServicePort{{Name: "http", Port: int32(80 + l.gen%5), TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}
}

// create creates kind ns/name at the current generation.
func (l *tenantLoad) create(ctx context.Context, kind, ns, name string) {
	om := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: l.labels(), Annotations: l.annotations()}
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
	l.stats.creates.Add(1)
}

// update updates (75%) or deletes (25%) kind ns/name; it returns the NotFound error when the
// object does not exist.
func (l *tenantLoad) update(ctx context.Context, kind, ns, name string) error {
	del := l.rng.Intn(4) == 0
	c := l.cs.CoreV1()
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
		o.Labels, o.Annotations, o.Data = l.labels(), l.annotations(), map[string]string{"gen": fmt.Sprint(l.gen)}
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
		o.Labels, o.Annotations, o.Data = l.labels(), l.annotations(), map[string][]byte{"gen": []byte(fmt.Sprint(l.gen))}
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
		o.Labels, o.Annotations = l.labels(), l.annotations()
		o.Spec.Selector, o.Spec.Ports = map[string]string{"app": fmt.Sprintf("web-%d", l.gen%3)}, l.servicePorts()
		_, err = c.Services(ns).Update(ctx, o, metav1.UpdateOptions{})
	case "Pod":
		var o *corev1.Pod
		if o, err = c.Pods(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		if !o.DeletionTimestamp.IsZero() {
			return nil // terminating: leave it to the syncer
		}
		if del {
			err = c.Pods(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &o.UID}})
			break
		}
		o.Labels, o.Annotations = l.labels(), l.annotations()
		_, err = c.Pods(ns).Update(ctx, o, metav1.UpdateOptions{})
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil // deleted between the Get and the write: nothing to do this step
		}
		return err
	}
	if del {
		l.stats.deletes.Add(1)
	} else {
		l.stats.updates.Add(1)
	}
	return nil
}
