package store

import (
	"context"
	"sync"
)

// Memory is a checkpoint store held in memory: Load returns what the last Save was given
// ((nil, nil) before any), and nothing outlives the process. Tests use it where a file or a
// Secret would add nothing. The zero value is ready; it is safe for concurrent use.
type Memory struct {
	// Name is shown by String ("mem:<Name>").
	Name string

	mu   sync.Mutex
	data []byte
}

// Load returns a copy of the last saved blob, or (nil, nil) when none was saved.
func (m *Memory) Load(context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data == nil {
		return nil, nil
	}
	return append([]byte(nil), m.data...), nil
}

// Save keeps a copy of data; it never fails.
func (m *Memory) Save(_ context.Context, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data = append([]byte(nil), data...)
	return nil
}

// String names the store for logs.
func (m *Memory) String() string { return "mem:" + m.Name }
