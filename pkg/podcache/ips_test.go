package podcache

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestChangedIPs(t *testing.T) {
	pod := func(phase corev1.PodPhase, ips ...string) *corev1.Pod {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
		for _, ip := range ips {
			p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: ip})
		}
		if len(ips) > 0 {
			p.Status.PodIP = ips[0]
		}
		return p
	}
	cached := func(p *corev1.Pod) any {
		c, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for name, tc := range map[string]struct {
		old, new any
		want     []string
	}{
		"deleted":             {old: pod(corev1.PodRunning, "10.0.0.1", "fd00::1"), new: nil, want: []string{"10.0.0.1", "fd00::1"}},
		"deleted, cached":     {old: cached(pod(corev1.PodRunning, "10.0.0.1")), new: nil, want: []string{"10.0.0.1"}},
		"moved":               {old: cached(pod(corev1.PodRunning, "10.0.0.1")), new: cached(pod(corev1.PodRunning, "10.0.0.2")), want: []string{"10.0.0.1", "10.0.0.2"}},
		"finished":            {old: pod(corev1.PodRunning, "10.0.0.1"), new: pod(corev1.PodFailed, "10.0.0.1"), want: []string{"10.0.0.1"}},
		"got an IP":           {old: pod(corev1.PodPending), new: pod(corev1.PodRunning, "10.0.0.3"), want: []string{"10.0.0.3"}},
		"unchanged":           {old: pod(corev1.PodRunning, "10.0.0.1"), new: pod(corev1.PodRunning, "::ffff:10.0.0.1")},
		"finished, then gone": {old: pod(corev1.PodSucceeded, "10.0.0.1"), new: nil},
	} {
		t.Run(name, func(t *testing.T) {
			got := ChangedIPs(tc.old, tc.new)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("changed = %v, want %v", got, tc.want)
			}
		})
	}
}
