package localcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Files of the super cluster's kubelet API simulation (kwok), under Dir/kwok.
const (
	kwokDir         = "kwok"
	kwokDebugConfig = "kwok-debug.yaml"
	podLogFile      = "pod.log"
	nobody          = 65534
)

// PodLogFile returns the file kwok serves as the log of every container of every super Pod
// (`kubectl logs`, the kubelet's /containerLogs), in the CRI log format (AppendPodLog writes
// it). Empty for a tenant control plane.
func (c *ControlPlane) PodLogFile() string {
	if !c.superPlane {
		return ""
	}
	return filepath.Join(c.Dir, kwokDir, podLogFile)
}

// ExecDir returns the working directory of the commands kwok runs for exec requests
// (SuperOptions.KubeletExec), empty at start: a directory of its own under os.TempDir() (mode
// 0755, owned by user nobody when running as root, so that the commands may enter it and
// write into it, as `kubectl cp` into a Pod does; the state directory is private), removed
// by Stop. Empty for a tenant control plane or without KubeletExec.
func (c *ControlPlane) ExecDir() string { return c.execDir }

var podLogMu sync.Mutex

// AppendPodLog appends lines to PodLogFile as stdout lines of the CRI log format
// ("<RFC3339Nano time> stdout F <line>"), as a container runtime writes them. A follower
// (`kubectl logs -f`) sees them as they are written.
func (c *ControlPlane) AppendPodLog(lines ...string) error {
	path := c.PodLogFile()
	if path == "" {
		return fmt.Errorf("control plane %q is not the super cluster", c.Name)
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), l)
	}
	podLogMu.Lock()
	defer podLogMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(b.String())
	return errorsJoin(err, f.Close())
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// writeKwokDebugConfig writes the kwok configuration of the super cluster's kubelet API: a
// ClusterLogs serving PodLogFile for every Pod and container, a ClusterAttach following it,
// resource metrics (kwokMetricsConfig), with KubeletExec a ClusterExec running commands in
// ExecDir (as nobody when running as root), and with KubeletPortForwardTarget a
// ClusterPortForward to that address. It returns the file's path.
func (c *ControlPlane) writeKwokDebugConfig() (string, error) {
	dir := filepath.Join(c.Dir, kwokDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("failed to create kwok dir: %w", err)
	}
	if err := os.WriteFile(c.PodLogFile(), nil, 0o644); err != nil {
		return "", fmt.Errorf("failed to create the Pod log file: %w", err)
	}
	cfg := fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: vc-syncer-logs
spec:
  selector: {}
  logs:
  - logsFile: %q
    previousLogsFile: %q
`, c.PodLogFile(), c.PodLogFile()) + kwokMetricsConfig()
	if c.kubeletExec {
		exec, err := c.kwokExecConfig()
		if err != nil {
			return "", err
		}
		cfg += exec
	}
	cfg += c.kwokAttachPortForwardConfig()
	path := filepath.Join(dir, kwokDebugConfig)
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return "", fmt.Errorf("failed to write kwok config: %w", err)
	}
	return path, nil
}
