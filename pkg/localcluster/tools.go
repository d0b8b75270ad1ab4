package localcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

const (
	// modulePath identifies the repository root when EnsureTools walks up from the working directory.
	modulePath = "github.com/vcsyncer/syncer"
	// toolsVersion is the cache folder name used by hack/build-tools.sh; keep the two in sync.
	toolsVersion = "k8s-v1.37.2-etcd-v3.7.3-kwok-v0.8.0"
	// kwokStagesFile is written by hack/build-tools.sh next to bin/, not inside it.
	kwokStagesFile = "kwok-stages.yaml"
)

// toolBinaries are the executables hack/build-tools.sh puts in <ToolsDir>/bin.
var toolBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok", "coredns"}

// ToolsDir returns the directory that holds the prebuilt control-plane binaries (in its bin/
// subdirectory) and kwok-stages.yaml. It applies the same rule as hack/build-tools.sh:
// $VCSYNCER_TOOLS_DIR if set, otherwise
// ${XDG_CACHE_HOME:-$HOME/.cache}/vc-syncer/k8s-v1.37.2-etcd-v3.7.3-kwok-v0.8.0.
// The directory may not exist; ToolsDir does not touch the file system.
func ToolsDir() string {
	if d := os.Getenv("VCSYNCER_TOOLS_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = os.TempDir()
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "vc-syncer", toolsVersion)
}

// missingTools lists the binaries and files hack/build-tools.sh would (re)build in dir.
// An empty result means every tool is present and executable.
func missingTools(dir string) []string {
	var missing []string
	for _, b := range toolBinaries {
		st, err := os.Stat(filepath.Join(dir, "bin", b))
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, "bin/"+b)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, kwokStagesFile)); err != nil || st.Size() == 0 {
		missing = append(missing, kwokStagesFile)
	}
	return missing
}

// CheckTools returns nil when dir (a tools directory, see ToolsDir) holds every control-plane
// binary and a non-empty kwok-stages.yaml, and otherwise an error that names what is missing
// and how to build it.
func CheckTools(dir string) error {
	if missing := missingTools(dir); len(missing) > 0 {
		return missingToolsError(dir, missing)
	}
	return nil
}

// missingToolsError explains which tools are missing from dir and how to build them.
func missingToolsError(dir string, missing []string) error {
	return fmt.Errorf("control-plane tools missing in %s: %s; build them once with `make tools` "+
		"(runs hack/build-tools.sh, about 10 minutes on a fresh machine) or point VCSYNCER_TOOLS_DIR at a built copy",
		dir, strings.Join(missing, ", "))
}

// ensureMu serializes builds started from one process; hack/build-tools.sh also takes a file
// lock, so concurrent processes are safe too.
var ensureMu sync.Mutex

// EnsureTools returns ToolsDir() after making sure every control-plane binary and
// kwok-stages.yaml is present. If something is missing it runs hack/build-tools.sh from the
// repository root (found by walking up from the working directory to the go.mod of module
// github.com/vcsyncer/syncer), which takes about 10 minutes on a fresh 2-core machine and
// seconds when only a relink is needed. progress, if not nil, receives the script's output one
// line at a time. Cancelling ctx kills the build.
//
// The error names the missing files and tells to run `make tools` when the repository root
// cannot be found, when the build fails, or when files are still missing after it.
func EnsureTools(ctx context.Context, progress func(string)) (string, error) {
	dir := ToolsDir()
	missing := missingTools(dir)
	if len(missing) == 0 {
		return dir, nil
	}
	ensureMu.Lock()
	defer ensureMu.Unlock()
	if missing = missingTools(dir); len(missing) == 0 {
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", fmt.Errorf("%w (cannot build them here: %w)", missingToolsError(dir, missing), err)
	}
	report(progress, fmt.Sprintf("building missing control-plane tools (%s) into %s with hack/build-tools.sh; this takes ~10 minutes the first time",
		strings.Join(missing, ", "), dir))

	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "build-tools.sh"), "runtime")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "VCSYNCER_TOOLS_DIR="+dir)
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	var tail lineTail
	scanDone := make(chan struct{})
	go func() {
		defer close(scanDone)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			tail.add(sc.Text())
			report(progress, sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	runErr := cmd.Run()
	_ = pw.Close()
	<-scanDone
	if runErr != nil {
		return "", fmt.Errorf("failed to build control-plane tools with %s/hack/build-tools.sh (run `make tools` to retry): %w\n%s",
			root, runErr, tail.String())
	}
	if missing = missingTools(dir); len(missing) != 0 {
		return "", missingToolsError(dir, missing)
	}
	return dir, nil
}

// repoRoot walks up from the working directory to the directory whose go.mod declares
// module github.com/vcsyncer/syncer.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("failed to get working directory: %w", err)
	}
	for d := wd; ; {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && goModModule(data) == modulePath {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("no go.mod of module " + modulePath + " above " + wd)
		}
		d = parent
	}
}

// goModModule returns the module path declared in a go.mod file, or "".
func goModModule(data []byte) string {
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// report calls progress if it is set.
func report(progress func(string), msg string) {
	if progress != nil {
		progress(msg)
	}
}

// lineTail keeps the last 30 lines written to it.
type lineTail struct {
	mu    sync.Mutex
	lines []string
}

func (t *lineTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
}

func (t *lineTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}
