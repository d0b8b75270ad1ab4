package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestConformanceParity reads two small JUnit reports and checks the counts and the parity
// lists: a test that passed on the super cluster and failed, or skipped itself, on the tenant
// is in onlySuperPassed with its reason; setup nodes are not tests.
func TestConformanceParity(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`<testsuites><testsuite>`+body+`</testsuite></testsuites>`), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	super, err := readJUnit(write("super.xml", `
		<testcase name="[SynchronizedBeforeSuite]"></testcase>
		<testcase name="[It] a [Conformance]"></testcase>
		<testcase name="[It] b [Conformance]"></testcase>
		<testcase name="[It] c [Conformance]"></testcase>
		<testcase name="[It] d [Conformance]"><failure message="kwok"></failure></testcase>
		<testcase name="[It] e [Conformance]"><skipped message="skipped"></skipped></testcase>`))
	if err != nil {
		t.Fatal(err)
	}
	tenant, err := readJUnit(write("tenant.xml", `
		<testcase name="[It] a [Conformance]"></testcase>
		<testcase name="[It] b [Conformance]"><failure message="RuntimeClass &quot;x&quot; not found"></failure></testcase>
		<testcase name="[It] c [Conformance]"><skipped message="no nodes"></skipped></testcase>
		<testcase name="[It] d [Conformance]"></testcase>`))
	if err != nil {
		t.Fatal(err)
	}
	r := conformanceResult{Super: super, Tenant: tenant}
	r.compare()
	if r.Selected != 4 || r.SuperPassed != 3 || r.TenantPassed != 2 {
		t.Errorf("selected %d, super passed %d, tenant passed %d; want 4, 3, 2", r.Selected, r.SuperPassed, r.TenantPassed)
	}
	want := map[string]string{
		"b [Conformance]": `RuntimeClass "x" not found`,
		"c [Conformance]": "skipped itself on the tenant (see its ginkgo.log)",
	}
	if len(r.OnlySuperPassed) != len(want) {
		t.Fatalf("onlySuperPassed = %+v, want %v", r.OnlySuperPassed, want)
	}
	for _, f := range r.OnlySuperPassed {
		if want[f.Name] != f.Reason {
			t.Errorf("onlySuperPassed %q: reason %q, want %q", f.Name, f.Reason, want[f.Name])
		}
	}
	if len(r.OnlyTenantPassed) != 1 || r.OnlyTenantPassed[0] != "d [Conformance]" {
		t.Errorf("onlyTenantPassed = %v, want [d [Conformance]]", r.OnlyTenantPassed)
	}
}
