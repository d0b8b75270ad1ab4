package isolation

// storageWalls returns the attacks on claims, ephemeral claim templates, namespace and object metadata.
func (s *suite) storageWalls() []attackCase {
	return nil
}
