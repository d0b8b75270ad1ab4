package localcluster

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
)

// kwokExecConfig creates ExecDir and returns the ClusterExec document of the kwok
// configuration: every exec runs the requested command here, in ExecDir, with PATH
// /usr/bin:/bin, as nobody when running as root (ExecDir is then nobody's, so that `kubectl
// cp` can write into it).
//
// kwok v0.8.0 never closes the stdin of a command it runs (pkg/utils/exec copies the stream
// into the command's stdin pipe and leaves the pipe open until the command exits), so a
// command that reads its input to the end never ends. GNU tar reading an archive from stdin,
// as `kubectl cp` into a Pod runs it (tar -xmf -), reads whole 10240-byte records and then
// drains its input: it waits for that end of file for ever (kubectl cp hangs; the file may be
// written incompletely). TAR_OPTIONS=--blocking-factor=1 makes tar read 512-byte records and
// stop at the archive's end blocks, which kubectl always sends.
func (c *ControlPlane) kwokExecConfig() (string, error) {
	d, err := os.MkdirTemp("", "vc-syncer-kwok-exec-")
	if err != nil {
		return "", fmt.Errorf("failed to create the exec dir: %w", err)
	}
	if err := os.Chmod(d, 0o755); err != nil { //nolint:gosec // nobody must enter it
		return "", err
	}
	c.execDir = d
	user := ""
	if os.Geteuid() == 0 {
		if err := os.Chown(d, nobody, nobody); err != nil {
			return "", fmt.Errorf("failed to give the exec dir to nobody: %w", err)
		}
		user = fmt.Sprintf("\n      securityContext:\n        runAsUser: %d\n        runAsGroup: %d", nobody, nobody)
	}
	return fmt.Sprintf(`---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata:
  name: vc-syncer-exec
spec:
  selector: {}
  execs:
  - local:
      workDir: %q
      envs:
      - name: PATH
        value: /usr/bin:/bin
      - name: TAR_OPTIONS
        value: --blocking-factor=1%s
`, c.ExecDir(), user), nil
}

// kwokAttachPortForwardConfig returns the ClusterAttach document of the kwok configuration
// (an attach to any container follows PodLogFile from its end: the lines AppendPodLog writes
// while it is attached) and, with a port-forward target, the ClusterPortForward that connects
// every port of every super Pod to it.
func (c *ControlPlane) kwokAttachPortForwardConfig() string {
	cfg := fmt.Sprintf(`---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterAttach
metadata:
  name: vc-syncer-attach
spec:
  selector: {}
  attaches:
  - logsFile: %q
`, c.PodLogFile())
	if c.portForwardTarget == "" {
		return cfg
	}
	host, port, _ := net.SplitHostPort(c.portForwardTarget) // checked by checkPortForwardTarget
	return cfg + fmt.Sprintf(`---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterPortForward
metadata:
  name: vc-syncer-port-forward
spec:
  selector: {}
  forwards:
  - target:
      address: %q
      port: %s
`, host, port)
}

// checkPortForwardTarget checks SuperOptions.KubeletPortForwardTarget: empty, or host:port
// with a loopback IP literal and a port 1-65535.
func checkPortForwardTarget(target string) error {
	if target == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return fmt.Errorf("invalid kubelet port-forward target %q: %w", target, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() || ip.Zone() != "" {
		return fmt.Errorf("invalid kubelet port-forward target %q: want a loopback IP address (127.0.0.0/8 or ::1)", target)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("invalid kubelet port-forward target %q: want a port 1-65535", target)
	}
	return nil
}
