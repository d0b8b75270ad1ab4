package restest

import (
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// LogSink collects the log lines written at V(0) and above through its Logger; safe for
// concurrent use.
type LogSink struct {
	mu    sync.Mutex
	lines []string
}

// Logger returns a logger that appends each line ("prefix args") to s.
func (s *LogSink) Logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		s.mu.Lock()
		s.lines = append(s.lines, prefix+" "+args)
		s.mu.Unlock()
	}, funcr.Options{Verbosity: 0})
}

// Lines returns a copy of the lines logged so far.
func (s *LogSink) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// Matching returns the lines logged so far that contain sub.
func (s *LogSink) Matching(sub string) []string {
	var out []string
	for _, l := range s.Lines() {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}
