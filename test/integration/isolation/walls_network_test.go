package isolation

// networkWalls returns the attacks on Service addresses, Endpoints and EndpointSlices.
func (s *suite) networkWalls() []attackCase {
	return nil
}
