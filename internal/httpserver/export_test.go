package httpserver

// SetMaxStreams sets the bound on open event streams for a test; the
// returned function puts the old one back.
func SetMaxStreams(n int64) (restore func()) {
	old := maxStreams
	maxStreams = n
	return func() { maxStreams = old }
}
