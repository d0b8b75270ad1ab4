package main

import "testing"

// TestRequestDelta: requests are counted per series (host, method, code) and summed by side
// and method; hosts that are not the super cluster's or a tenant's are left out, and a series
// new in the second scrape counts from 0.
func TestRequestDelta(t *testing.T) {
	before := parseMetrics(`rest_client_requests_total{code="200",host="127.0.0.1:1",method="GET"} 10
rest_client_requests_total{code="200",host="127.0.0.1:2",method="GET"} 100
rest_client_requests_total{code="200",host="127.0.0.1:3",method="PUT"} 7
rest_client_requests_total{code="200",host="127.0.0.1:9",method="GET"} 5
`)
	after := parseMetrics(`rest_client_requests_total{method="GET",host="127.0.0.1:1",code="200"} 12
rest_client_requests_total{code="200",host="127.0.0.1:2",method="GET"} 103
rest_client_requests_total{code="409",host="127.0.0.1:2",method="PUT"} 1
rest_client_requests_total{code="200",host="127.0.0.1:3",method="PUT"} 9
rest_client_requests_total{code="200",host="127.0.0.1:9",method="GET"} 50
`)
	got := requestDelta(before, after, map[string]string{"127.0.0.1:1": "super", "127.0.0.1:2": "tenant", "127.0.0.1:3": "tenant"})
	want := map[string]float64{"super/GET": 2, "tenant/GET": 3, "tenant/PUT": 3}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}

// TestPerTenantSlope: the slope of a figure over the number of tenants, and a single point's
// figure divided by its tenants.
func TestPerTenantSlope(t *testing.T) {
	pts := []tenantsPoint{{Tenants: 1, RSSBytes: 110}, {Tenants: 5, RSSBytes: 150}, {Tenants: 10, RSSBytes: 200}}
	if got := perTenantSlope(pts, func(p tenantsPoint) float64 { return float64(p.RSSBytes) }); got != 10 {
		t.Errorf("slope %v, want 10", got)
	}
	if got := perTenantSlope(pts[2:], func(p tenantsPoint) float64 { return float64(p.RSSBytes) }); got != 20 {
		t.Errorf("one point: %v, want 20", got)
	}
}
