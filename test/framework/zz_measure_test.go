package framework

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// Temporary measurement (deleted before hand-off).
func TestZZMeasure(t *testing.T) {
	if os.Getenv("MEASURE") == "" {
		t.Skip()
	}
	ctx := t.Context()
	var t0 time.Time
	var seq time.Duration
	var planes []*ControlPlane
	var s *ControlPlane
	var err error
	var env *Environment
	dir := "/tmp/vcm"; os.RemoveAll(dir); if os.Getenv("PARONLY") != "" { goto par }
	// sequential
	t0 = time.Now()
	s, err = StartSuper(ctx, SuperOptions{Options: Options{Dir: dir + "/seq", Progress: func(s string) { t.Log(s) }}})
	if err != nil {
		t.Fatal(err)
	}
	planes = append(planes, s)
	for i := 1; i <= 4; i++ {
		tn, err := StartTenant(ctx, "t"+strconv.Itoa(i), Options{Dir: dir + "/seq", Progress: func(s string) { t.Log(s) }})
		if err != nil {
			t.Fatal(err)
		}
		planes = append(planes, tn)
	}
	seq = time.Since(t0)
	time.Sleep(30 * time.Second)
	for _, p := range planes {
		for c, pid := range p.PIDs() {
			t.Logf("RSS %s/%s %d MiB", p.Name, c, rssMiB(pid))
		}
	}
	for _, p := range planes {
		t.Logf("SEQ %s %s %v", p.Name, p.StartupDuration(), p.ComponentStartupDurations())
		_ = p.Stop()
	}
	t.Logf("SEQ total %s", seq)
par:
	t0 = time.Now()
	env, err = Start(ctx, SuperOptions{Options: Options{Dir: dir + "/par"}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	par := time.Since(t0)
	for _, p := range env.ControlPlanes() {
		t.Logf("PAR %s %s %v", p.Name, p.StartupDuration(), p.ComponentStartupDurations())
	}
	t.Logf("PAR total %s", par)
	t0 = time.Now()
	_ = env.Stop()
	t.Logf("PAR stop %s", time.Since(t0))
}
