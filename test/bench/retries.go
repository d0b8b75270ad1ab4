package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// retryKey is one (direction, kind, reason) of the syncer's "Retrying sync" log lines.
type retryKey struct{ Direction, Kind, Reason string }

// retryCount is the retries of one key seen in a syncer log: lines, and the retries the
// lines say were suppressed before them (the syncer logs the first retry of each tenant, kind,
// direction and reason, then one line a minute with the count of the others; retries after the
// last line of a key are in no line, so the total is a lower bound of
// vcsyncer_sync_retries_total).
type retryCount struct {
	Direction, Kind, Reason string
	Lines, Suppressed       int
	Examples                []string // up to 3 error messages
}

// retriesFromLog sums the "Retrying sync" lines of a syncer log (console or JSON encoding)
// by direction, kind and reason.
func retriesFromLog(path string) ([]retryCount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byKey := map[retryKey]*retryCount{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "Retrying sync") {
			continue
		}
		i := strings.Index(line, "{")
		if i < 0 {
			continue
		}
		var fields struct {
			Direction  string `json:"direction"`
			Kind       string `json:"kind"`
			Reason     string `json:"reason"`
			Error      string `json:"error"`
			Suppressed int    `json:"suppressedSinceLastLine"`
			Msg        string `json:"msg"`
		}
		if json.Unmarshal([]byte(line[i:]), &fields) != nil || fields.Reason == "" {
			continue
		}
		k := retryKey{fields.Direction, fields.Kind, fields.Reason}
		c := byKey[k]
		if c == nil {
			c = &retryCount{Direction: k.Direction, Kind: k.Kind, Reason: k.Reason}
			byKey[k] = c
		}
		c.Lines++
		c.Suppressed += fields.Suppressed
		if len(c.Examples) < 3 {
			c.Examples = append(c.Examples, fields.Error)
		}
	}
	out := make([]retryCount, 0, len(byKey))
	for _, c := range byKey {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Direction != b.Direction {
			return a.Direction < b.Direction
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Reason < b.Reason
	})
	return out, sc.Err()
}

// writeRetries writes retries.json and prints one line per key: what the syncer retried in
// the run and why, from its log.
func writeRetries(dir, logPath string) error {
	rc, err := retriesFromLog(logPath)
	if err != nil {
		return err
	}
	j, err := json.MarshalIndent(rc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "retries.json"), j, 0o644); err != nil {
		return err
	}
	if len(rc) == 0 {
		logf("retries: none logged")
	}
	for _, c := range rc {
		ex := ""
		if len(c.Examples) > 0 {
			ex = "; e.g. " + c.Examples[0]
		}
		logf("retries: %s %s %s: %d logged + %d suppressed%s", c.Direction, c.Kind, c.Reason, c.Lines, c.Suppressed, ex)
	}
	return nil
}
