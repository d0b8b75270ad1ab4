package resume

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/vnode"
)

// vnodeState is the vNode bookkeeping as a checkpoint.Checkpointable: the Pods bound to each
// vNode and when each was last active, so a restarted syncer keeps the vNode GC grace instead
// of restarting it.
type vnodeState struct{ b *vnode.Bindings }

func (v vnodeState) Name() string { return "vnode-bindings" }

func (v vnodeState) Checkpoint(context.Context) ([]byte, error) { return json.Marshal(v.b.Snapshot()) }

func (v vnodeState) Restore(_ context.Context, data []byte) error {
	var snap vnode.Snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return err
	}
	v.b.Restore(snap)
	return nil
}

// Digest is the configuration that shapes saved state: the kinds synced and their options,
// and Options.Config. A checkpoint written with another is discarded. The build is not part
// of it: the checkpoint schema decides whether the code can read a checkpoint.
type Digest struct {
	DisableFairQueuing bool
	PodSecurityEnforce string
	ClusterDomain      string
	TenantDNS          bool
	OptInKinds         []resources.Kind
	DisabledKinds      []resources.Kind
	Config             string
}

// String returns the digest: 16 hex digits of a SHA-256 over d.
func (d Digest) String() string {
	h := sha256.New()
	kinds := make([]string, 0, len(d.OptInKinds)+len(d.DisabledKinds))
	for _, k := range d.OptInKinds {
		kinds = append(kinds, string(k))
	}
	for _, k := range d.DisabledKinds {
		kinds = append(kinds, "-"+string(k)) // a kind turned off changes what is cached
	}
	sort.Strings(kinds)
	fmt.Fprintf(h, "%v|%s|%s|%v|%s|%s", d.DisableFairQueuing, d.PodSecurityEnforce, d.ClusterDomain, d.TenantDNS,
		strings.Join(kinds, ","), d.Config)
	return hex.EncodeToString(h.Sum(nil))[:16]
}
