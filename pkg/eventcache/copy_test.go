package eventcache

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
)

// A Copy keeps what the syncer compares (ShownDigest) and a bounded metadata: 200 KB of
// labels and annotations a tenant writes into an Event it labels as the syncer's are dropped.
func TestCopyIsBoundedWhateverTheEventHolds(t *testing.T) {
	e := fullEvent()
	e.Annotations = map[string]string{"pad": strings.Repeat("a", 100_000)}
	e.Labels["pad"] = strings.Repeat("l", 63)
	e.Message = strings.Repeat("m", 100_000)
	c := NewCopy(e)
	if got := c.Size(); got > 1024 {
		t.Errorf("Size() = %d for an Event of 200 KB, want a bounded entry (≤ 1 KiB)", got)
	}
	if len(c.Labels) != 0 || len(c.Annotations) != 0 || c.Name != e.Name || c.Namespace != e.Namespace ||
		c.UID != e.UID || c.ResourceVersion != e.ResourceVersion {
		t.Errorf("metadata not reduced to name, namespace, UID, resourceVersion: %+v", c.ObjectMeta)
	}
	if c.Digest != ShownDigest(e) {
		t.Error("Digest is not ShownDigest of the Event")
	}
}

// ShownDigest follows the shown fields only, and survives the apiserver's round trip (JSON
// timestamps to the second, series time to the microsecond).
func TestShownDigest(t *testing.T) {
	base := fullEvent()
	d := ShownDigest(base)
	// Round trip through JSON, with sub-second parts the apiserver drops.
	sent := base.DeepCopy()
	sent.FirstTimestamp.Time = sent.FirstTimestamp.Add(300 * time.Millisecond)
	sent.Series.LastObservedTime.Time = sent.Series.LastObservedTime.Add(700 * time.Nanosecond)
	b, err := json.Marshal(sent)
	if err != nil {
		t.Fatal(err)
	}
	var back corev1.Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if ShownDigest(&back) != d {
		t.Error("digest changed across a JSON round trip")
	}
	same := base.DeepCopy()
	same.Labels, same.Annotations, same.ResourceVersion = nil, map[string]string{"x": "y"}, "99"
	same.Source.Host, same.ReportingInstance = "other", "other"
	if ShownDigest(same) != d {
		t.Error("digest follows fields that are not shown")
	}
	for name, change := range map[string]func(*corev1.Event){
		"message":        func(e *corev1.Event) { e.Message += "!" },
		"reason":         func(e *corev1.Event) { e.Reason = "Other" },
		"type":           func(e *corev1.Event) { e.Type = corev1.EventTypeWarning },
		"count":          func(e *corev1.Event) { e.Count++ },
		"lastTimestamp":  func(e *corev1.Event) { e.LastTimestamp.Time = e.LastTimestamp.Add(time.Second) },
		"firstTimestamp": func(e *corev1.Event) { e.FirstTimestamp.Time = e.FirstTimestamp.Add(-time.Second) },
		"series":         func(e *corev1.Event) { e.Series.Count++ },
		"no series":      func(e *corev1.Event) { e.Series = nil },
		"involvedObject": func(e *corev1.Event) { e.InvolvedObject.UID = "other" },
	} {
		c := base.DeepCopy()
		change(c)
		if ShownDigest(c) == d {
			t.Errorf("%s: digest did not change", name)
		}
	}
}

func TestGetCopy(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	e := fullEvent()
	if err := idx.Add(NewCopy(e)); err != nil {
		t.Fatal(err)
	}
	plain := fullEvent()
	plain.Name = "plain"
	if err := idx.Add(plain); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{e.Name, "plain"} {
		c, err := GetCopy(idx, "ns", name)
		if err != nil || c.Name != name || c.Digest != ShownDigest(e) {
			t.Errorf("GetCopy(%s) = %+v, %v", name, c, err)
		}
	}
	if _, err := GetCopy(idx, "ns", "missing"); !apierrors.IsNotFound(err) {
		t.Errorf("GetCopy of a missing Event: %v, want NotFound", err)
	}
	if got := NewCopy(e).DeepCopyObject().(*Copy); got.Digest != ShownDigest(e) || got.Name != e.Name {
		t.Errorf("DeepCopyObject = %+v", got)
	}
}
