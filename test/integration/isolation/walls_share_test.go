package isolation

// shareWalls returns the attacks on a tenant's share of super writes and workers.
func (s *suite) shareWalls() []attackCase {
	return nil
}
