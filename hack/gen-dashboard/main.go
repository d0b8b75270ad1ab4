package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vcsyncer/syncer/pkg/metrics/dashboard"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen-dashboard:", err)
		os.Exit(1)
	}
}

func run() error {
	js, err := dashboard.JSON()
	if err != nil {
		return err
	}
	for path, data := range map[string][]byte{
		dashboard.JSONPath:      js,
		dashboard.ConfigMapPath: dashboard.ConfigMap(js),
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", path)
	}
	return nil
}
