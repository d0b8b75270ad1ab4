package resume

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

// TestLogDiffBoundsTenantStrings: the resume log names at most three changed objects,
// each cut to maxDiffSample bytes, however long the names and resourceVersions a hostile
// tenant apiserver sends; nothing is logged when nothing changed.
func TestLogDiffBoundsTenantStrings(t *testing.T) {
	src := source.NewRegistry().Source("tenant/t/ConfigMap")
	huge := strings.Repeat("9", 1<<20)
	var changed []metav1.Object
	for i := range 5 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: fmt.Sprintf("cm-%d-%s", i, huge[:1000]), ResourceVersion: huge}}
		src.Ack(source.Key(cm), source.ObjectVersion{ResourceVersion: huge})
		changed = append(changed, cm)
	}
	sink := &restest.LogSink{}
	logDiff(sink.Logger(), "t", resources.KindConfigMap, "tenant", src, nil, nil)
	if len(sink.Lines()) != 0 {
		t.Fatalf("logged %d lines with nothing changed, want none", len(sink.Lines()))
	}
	logDiff(sink.Logger(), "t", resources.KindConfigMap, "tenant", src, changed, nil)
	if len(sink.Lines()) != 1 {
		t.Fatalf("logged %d lines, want 1", len(sink.Lines()))
	}
	if n, limit := len(sink.Lines()[0]), 3*(maxDiffSample+10)+500; n > limit {
		t.Errorf("resume log line of %d bytes for 1 MiB resourceVersions, want at most %d", n, limit)
	}
	if !strings.Contains(sink.Lines()[0], `"changed"=5`) {
		t.Errorf("resume log line does not count the 5 changed objects: %.300s", sink.Lines()[0])
	}
}
