package load

// UseRawSock switches the Linux socket fast path for one test (it has no
// effect elsewhere) and returns the function that restores it. Not for
// parallel tests: it sets a package variable.
func UseRawSock(on bool) (restore func()) {
	old := rawSock
	rawSock = on
	return func() { rawSock = old }
}
