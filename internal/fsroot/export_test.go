//go:build linux

package fsroot

// forceWalk makes resolution walk component by component (as on kernels
// without openat2) until the returned function is called.
func forceWalk() func() {
	old := noOpenat2.Load()
	noOpenat2.Store(true)
	return func() { noOpenat2.Store(old) }
}
