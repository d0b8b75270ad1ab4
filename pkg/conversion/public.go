package conversion

// LabelPublic marks a super-cluster object that its admins publish to every tenant
// (PriorityClasses, StorageClasses): "true" makes the syncer copy it up into each tenant
// control plane. The syncer never writes this label; it only reads it.
const (
	LabelPublic = "tenancy.vcsyncer.io/public"
	// PublicValue is the value of LabelPublic that publishes an object.
	PublicValue = "true"
)
