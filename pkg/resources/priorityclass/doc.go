// Package priorityclass syncs public super-cluster PriorityClasses upward into every tenant.
//
// The super cluster's admins publish a PriorityClass by labelling it
// tenancy.vcsyncer.io/public=true (conversion.LabelPublic). The syncer keeps a copy of each
// public class in every tenant, labelled tenancy.vcsyncer.io/managed-by=vc-syncer there, so
// tenant Pods can name it (the tenant's Priority admission refuses unknown names). A copy is
// deleted when the super class is deleted or no longer public. A tenant's own PriorityClass of
// the same name is never touched.
//
// # Translation
//
// value, preemptionPolicy and description are copied. globalDefault is not (always false in
// the tenant): a tenant may have its own default, and two defaults are invalid. value and
// preemptionPolicy are immutable, so a copy whose super class changed them is recreated.
//
// # Pods
//
// A tenant Pod's priorityClassName is kept in the super Pod when it names a system class or a
// public super class (IsPublic); a Pod naming any other class (one the tenant created) is not
// synced: it stays Pending and gets a Warning Event with reason ReasonPriorityClassNotPublic
// (pkg/resources/pod). The super cluster's admission then sets the super Pod's priority.
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/conversion, pkg/reconcile, pkg/resources, pkg/tenant); test/layering
// checks it.
package priorityclass
