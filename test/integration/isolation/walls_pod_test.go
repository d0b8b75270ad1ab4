package isolation

// podWalls returns the attacks on scheduling terms, grace periods, ephemeral containers.
func (s *suite) podWalls() []attackCase {
	return nil
}
