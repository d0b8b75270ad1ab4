package isolation

// boundsWalls returns the attacks on the syncer's memory per tenant.
func (s *suite) boundsWalls() []attackCase {
	return nil
}
