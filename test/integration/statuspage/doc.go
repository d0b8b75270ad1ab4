// Package statuspage runs the syncer in-process against real local control planes (a
// super cluster and two tenants, plus a registered tenant whose apiserver cannot be reached and
// one whose kubeconfig Secret does not exist), loads its status page in headless Chromium
// (Debian packages chromium and chromium-driver, driven through WebDriver) and checks that
// every tenant is shown with its phase and weight, that the page refreshes itself in place,
// and that it shows a tenant's downward queue filling and draining. It also checks /healthz
// and /readyz.
//
// With VCSYNCER_STATUS_SCREENSHOT=PATH (relative paths are taken from the repository root,
// e.g. docs/status-page.png) it saves a screenshot of the page taken during the queue burst.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package statuspage
