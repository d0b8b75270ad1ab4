package tenant

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// TestConnectionStatus: the phase and the Connected and Synced conditions say what is wrong: a
// Tenant refused because another Tenant syncs its control plane is DuplicateControlPlane (its
// apiserver answers: not Unreachable), one whose credentials are refused is Unauthorized, and
// neither is "waiting for tenant caches" (it will not sync until the cause is fixed).
func TestConnectionStatus(t *testing.T) {
	type want struct {
		phase             tenancyv1alpha1.TenantPhase
		connected, synced metav1.ConditionStatus
		connReason        string
		syncReason        string
	}
	cases := map[string]struct {
		st   State
		want want
	}{
		"probing":      {State{}, want{tenancyv1alpha1.TenantConnecting, metav1.ConditionUnknown, metav1.ConditionFalse, ReasonWaiting, ReasonCachesSyncing}},
		"syncing":      {State{Connected: true}, want{tenancyv1alpha1.TenantConnecting, metav1.ConditionTrue, metav1.ConditionFalse, ReasonReachable, ReasonCachesSyncing}},
		"running":      {State{Connected: true, Synced: true}, want{tenancyv1alpha1.TenantRunning, metav1.ConditionTrue, metav1.ConditionTrue, ReasonReachable, ReasonCachesSynced}},
		"unreachable":  {State{LastError: "dial tcp: refused", LastReason: ReasonUnreachable}, want{tenancyv1alpha1.TenantUnreachable, metav1.ConditionFalse, metav1.ConditionFalse, ReasonUnreachable, ReasonUnreachable}},
		"unauthorized": {State{LastError: "Unauthorized", LastReason: ReasonUnauthorized}, want{tenancyv1alpha1.TenantUnauthorized, metav1.ConditionFalse, metav1.ConditionFalse, ReasonUnauthorized, ReasonUnauthorized}},
		"duplicate": {State{LastError: "duplicate control plane: Tenant \"a\" already syncs this control plane", LastReason: ReasonDuplicateControlPlane},
			want{tenancyv1alpha1.TenantDuplicateControlPlane, metav1.ConditionFalse, metav1.ConditionFalse, ReasonDuplicateControlPlane, ReasonDuplicateControlPlane}},
		"lost after sync":          {State{Synced: true, LastError: "timeout", LastReason: ReasonUnreachable}, want{tenancyv1alpha1.TenantUnreachable, metav1.ConditionFalse, metav1.ConditionFalse, ReasonUnreachable, ReasonUnreachable}},
		"credentials revoked":      {State{Synced: true, LastError: "Unauthorized", LastReason: ReasonUnauthorized}, want{tenancyv1alpha1.TenantUnauthorized, metav1.ConditionFalse, metav1.ConditionFalse, ReasonUnauthorized, ReasonUnauthorized}},
		"no reason: unreachable":   {State{LastError: "x"}, want{tenancyv1alpha1.TenantUnreachable, metav1.ConditionFalse, metav1.ConditionFalse, ReasonUnreachable, ReasonUnreachable}},
		"stopped cluster: probing": {State{Stopped: true}, want{tenancyv1alpha1.TenantConnecting, metav1.ConditionUnknown, metav1.ConditionFalse, ReasonWaiting, ReasonCachesSyncing}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tn := &tenancyv1alpha1.Tenant{}
			setConnectionStatus(tn, tc.st)
			if tn.Status.Phase != tc.want.phase {
				t.Errorf("phase = %q, want %q", tn.Status.Phase, tc.want.phase)
			}
			if got := PhaseOf(tc.st); got != tc.want.phase {
				t.Errorf("PhaseOf = %q, want %q", got, tc.want.phase)
			}
			c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionConnected)
			if c == nil || c.Status != tc.want.connected || c.Reason != tc.want.connReason {
				t.Errorf("Connected = %+v, want %s %s", c, tc.want.connected, tc.want.connReason)
			}
			sc := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionSynced)
			if sc == nil || sc.Status != tc.want.synced || sc.Reason != tc.want.syncReason {
				t.Errorf("Synced = %+v, want %s %s", sc, tc.want.synced, tc.want.syncReason)
			}
		})
	}
}
