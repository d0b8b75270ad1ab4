package restart_test

import (
	"time"

	"github.com/vcsyncer/syncer/test/chaos"
)

// The load is test/chaos's (chaos.Load): every object it creates carries labelTest=valueTest
// and lives in a namespace named nsPrefix*; the convergence check looks only at those.
const (
	labelTest = chaos.LabelLoad
	valueTest = chaos.ValueLoad
	annNote   = chaos.AnnotationNote // a plain key: the built-in metadata allowlist copies it
	nsPrefix  = chaos.NamespacePrefix
	// loadPeriod is the mean time between two operations of one tenant's load.
	loadPeriod = 165 * time.Millisecond
)

// stableNamespaces live for the whole test; churn namespaces come and go.
var stableNamespaces = chaos.StableNamespaces
