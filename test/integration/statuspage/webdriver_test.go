package statuspage_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/vcsyncer/syncer/test/integration/itest"
)

// chromiumFlags are the flags headless Chromium runs with here: no sandbox (we may
// run as root in a container), no GPU, and nothing that reaches the network on its own.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--window-size=1300,480", "--hide-scrollbars",
}

// browser is one headless Chromium session driven through chromedriver's W3C WebDriver HTTP
// API (https://www.w3.org/TR/webdriver2/), with just the commands these tests need.
type browser struct {
	base    string // chromedriver URL
	session string
}

// startBrowser starts chromedriver (Debian package chromium-driver) on a free loopback port and
// opens a headless Chromium session; both stop when the test ends.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	driver, err := exec.LookPath("chromedriver")
	if err != nil {
		t.Fatal("chromedriver not found: install Debian packages chromium and chromium-driver (hack/ensure-chromium.sh, run by make test)")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not found: install Debian packages chromium and chromium-driver (hack/ensure-chromium.sh, run by make test)")
	}
	port := itest.FreePort(t)
	logPath := filepath.Join(t.TempDir(), "chromedriver.log")
	cmd := exec.Command(driver, fmt.Sprintf("--port=%d", port), "--log-path="+logPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // chromedriver and the browsers it started
		_ = cmd.Wait()
		if t.Failed() {
			if data, err := os.ReadFile(logPath); err == nil && len(data) > 4000 {
				t.Logf("chromedriver log tail:\n%s", data[len(data)-4000:])
			}
		}
	})
	b := &browser{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		var st struct {
			Ready bool `json:"ready"`
		}
		return b.call(http.MethodGet, "/status", nil, &st) == nil && st.Ready, nil
	})
	if err != nil {
		t.Fatal("chromedriver did not become ready within 30s")
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":        "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": chromiumFlags},
	}}}
	if err := b.call(http.MethodPost, "/session", caps, &s); err != nil {
		t.Fatalf("failed to start headless Chromium: %v", err)
	}
	b.session = "/session/" + s.SessionID
	t.Cleanup(func() { _ = b.call(http.MethodDelete, b.session, nil, nil) })
	return b
}

// call sends one WebDriver command and decodes the response's "value" into out.
func (b *browser) call(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, data)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, env.Value)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(env.Value, out)
}

// navigate loads url and waits for the page to load.
func (b *browser) navigate(t *testing.T, url string) {
	t.Helper()
	if err := b.call(http.MethodPost, b.session+"/url", map[string]string{"url": url}, nil); err != nil {
		t.Fatal(err)
	}
}

// eval runs script (a function body; return a JSON-able value) in the page.
func (b *browser) eval(script string, out any) error {
	return b.call(http.MethodPost, b.session+"/execute/sync", map[string]any{"script": script, "args": []any{}}, out)
}

// screenshot saves a PNG of the viewport to path.
func (b *browser) screenshot(t *testing.T, path string) {
	t.Helper()
	var b64 string
	if err := b.call(http.MethodGet, b.session+"/screenshot", nil, &b64); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the status page saved to %s (%d bytes)", path, len(png))
}
