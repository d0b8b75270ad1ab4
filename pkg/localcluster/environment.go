package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// defaultStartParallelism is how many control planes Start brings up at once unless
// $VCSYNCER_START_PARALLELISM says otherwise. Measured on 2 cores for a super cluster and 8
// tenants: 17.8 s with 2 at a time (each apiserver ready in ~2.7 s), 13.1 s with 4 (~3.5 s
// each), 13.8 s with all 9 at once (~10.5 s each). kube-apiserver start-up is not purely
// CPU-bound, so 4 keeps each start short while overlapping the waits.
const defaultStartParallelism = 4

// startParallelism returns $VCSYNCER_START_PARALLELISM if it is a positive integer, else
// defaultStartParallelism.
func startParallelism() int {
	if n, err := strconv.Atoi(os.Getenv("VCSYNCER_START_PARALLELISM")); err == nil && n > 0 {
		return n
	}
	return defaultStartParallelism
}

// Environment is a super cluster and its tenant control planes, started by Start or StartT.
type Environment struct {
	// Super is the super cluster (with kube-scheduler, kwok and fake Nodes).
	Super *ControlPlane
	// Tenants are the tenant control planes "tenant-1".."tenant-<n>", in that order.
	Tenants []*ControlPlane
	// Dir is the parent state directory; each control plane lives in Dir/<name>.
	Dir string

	opts      SuperOptions // as Start was called, for AddTenants
	removeDir bool
	stopOnce  sync.Once
	stopErr   error
}

// TenantName returns the name Start gives to the i-th tenant (1-based): "tenant-<i>".
func TenantName(i int) string { return "tenant-" + strconv.Itoa(i) }

// Start starts the super cluster (see StartSuper) and the given number of tenant control
// planes, named "tenant-1".."tenant-<n>" (see StartTenant) with Service ranges
// TenantServiceCIDR(1)..TenantServiceCIDR(n), all under o.Dir (default: a new
// temporary directory that a successful Stop removes). Control planes start in that order,
// four at a time ($VCSYNCER_START_PARALLELISM overrides the number). Missing tools are built
// first when o.ToolsDir is empty (see EnsureTools).
//
// ctx bounds the start-up only. If any control plane fails, the others are cancelled and
// stopped, and the error reports every failure with the tail of the failing component's log.
func Start(ctx context.Context, o SuperOptions, tenants int) (*Environment, error) {
	if tenants < 0 || tenants > 255 {
		return nil, fmt.Errorf("invalid number of tenants %d: between 0 and 255", tenants)
	}
	if o.ToolsDir == "" {
		dir, err := EnsureTools(ctx, o.Progress)
		if err != nil {
			return nil, err
		}
		o.ToolsDir = dir
	}
	env := &Environment{Dir: o.Dir, Tenants: make([]*ControlPlane, tenants)}
	if env.Dir == "" {
		d, err := os.MkdirTemp("", "vc-syncer-env-")
		if err != nil {
			return nil, fmt.Errorf("failed to create state dir: %w", err)
		}
		env.Dir, env.removeDir = d, true
	}
	o.Dir = env.Dir
	if o.Progress != nil {
		var mu sync.Mutex
		progress := o.Progress
		o.Progress = func(s string) {
			mu.Lock()
			defer mu.Unlock()
			progress(s)
		}
	}

	env.opts = o
	t0 := time.Now()
	// Jobs run in order (super first, then tenant-1, tenant-2, ...), startParallelism at a time.
	jobs := []func(context.Context) error{func(ctx context.Context) (err error) { env.Super, err = StartSuper(ctx, o); return err }}
	jobs = append(jobs, env.tenantJobs(0, tenants)...)
	if err := runJobs(ctx, jobs); err != nil {
		_ = env.stopAll()
		return nil, fmt.Errorf("failed to start environment in %s: %w", env.Dir, err)
	}
	report(o.Progress, fmt.Sprintf("environment with super cluster and %d tenants ready in %s", tenants, since(t0)))
	return env, nil
}

// AddTenants starts n more tenant control planes, named and given Service ranges as Start
// does (tenant-<k+1>..tenant-<k+n> after k existing ones), startParallelism at a time, and
// appends them to e.Tenants. The total stays at most 255. On error the tenants this call
// started are stopped and e.Tenants is unchanged; the environment's others keep running. The
// failed tenants' state directories are kept (with their logs), so calling AddTenants again
// fails for those names.
func (e *Environment) AddTenants(ctx context.Context, n int) error {
	k := len(e.Tenants)
	if n < 0 || k+n > 255 {
		return fmt.Errorf("invalid number of tenants %d+%d: at most 255 in all", k, n)
	}
	t0 := time.Now()
	e.Tenants = append(e.Tenants, make([]*ControlPlane, n)...)
	if err := runJobs(ctx, e.tenantJobs(k, n)); err != nil {
		for _, cp := range e.Tenants[k:] {
			if cp != nil {
				_ = cp.Stop()
			}
		}
		e.Tenants = e.Tenants[:k]
		return fmt.Errorf("failed to add %d tenants in %s: %w", n, e.Dir, err)
	}
	report(e.opts.Progress, fmt.Sprintf("%d tenants added in %s (%d in all)", n, since(t0), len(e.Tenants)))
	return nil
}

// tenantJobs returns the start jobs of tenants k+1..k+n, which fill e.Tenants[k:k+n].
func (e *Environment) tenantJobs(k, n int) []func(context.Context) error {
	var jobs []func(context.Context) error
	for i := k; i < k+n; i++ {
		to := e.opts.Options
		to.ServiceCIDR = TenantServiceCIDR(i + 1)
		jobs = append(jobs, func(ctx context.Context) (err error) {
			e.Tenants[i], err = StartTenant(ctx, TenantName(i+1), to)
			return err
		})
	}
	return jobs
}

// runJobs runs the jobs in order, startParallelism at a time. The first failure cancels the
// rest; the error joins every failure (a cancellation only when nothing else failed).
func runJobs(ctx context.Context, jobs []func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queue := make(chan func(context.Context) error, len(jobs))
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range min(startParallelism(), len(jobs)) {
		wg.Go(func() {
			for job := range queue {
				if ctx.Err() != nil {
					return
				}
				if err := job(ctx); err != nil {
					mu.Lock()
					if len(errs) == 0 || !errors.Is(err, context.Canceled) {
						errs = append(errs, err)
					}
					mu.Unlock()
					cancel()
				}
			}
		})
	}
	wg.Wait()
	if len(errs) == 0 && ctx.Err() != nil {
		errs = append(errs, context.Cause(ctx)) // cancelled before every job ran
	}
	return errors.Join(errs...)
}

// Stop stops every control plane of the environment in parallel (see ControlPlane.Stop) and,
// if Start created the state directory itself, removes it unless a control plane reported an
// error. It is idempotent; later calls return the first call's result.
func (e *Environment) Stop() error {
	e.stopOnce.Do(func() {
		e.stopErr = e.stopAll()
		if e.stopErr == nil && e.removeDir {
			e.stopErr = os.RemoveAll(e.Dir)
		}
	})
	return e.stopErr
}

// stopAll stops every started control plane in parallel and joins their errors.
func (e *Environment) stopAll() error {
	planes := append([]*ControlPlane{e.Super}, e.Tenants...)
	errs := make([]error, len(planes))
	var wg sync.WaitGroup
	for i, cp := range planes {
		if cp != nil {
			wg.Go(func() { errs[i] = cp.Stop() })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ControlPlanes returns the super cluster followed by the tenants.
func (e *Environment) ControlPlanes() []*ControlPlane {
	return append([]*ControlPlane{e.Super}, e.Tenants...)
}
