// Package restest builds, for unit tests of the downward reconcilers, one tenant and a super
// cluster on fake clientsets whose caches the test fills by hand (the informers never run): a
// reconciler then reads exactly what the test put there and writes to the fake super clientset.
// LogSink collects the log lines a test's logger writes.
//
// It sits on floor 4 of the package map in docs/architecture.md and may import packages on floors
// 0–4 only (today: pkg/apis/tenancy/v1alpha1, pkg/metrics, pkg/policy, pkg/resources,
// pkg/tenant); test/layering checks it.
package restest
